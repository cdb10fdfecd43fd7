import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/*
 * Files the service reads at run time (templates, the demo page, the compiled browser client)
 * live in the project tree, not beside the compiled code: the same
 * module runs from src/ (tsx, jest) and from dist/src/ (`npm start`), so a `..` chain from
 * __dirname would point at different places. The root is the nearest folder above this module
 * holding a package.json, found once at load.
 */

function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

const PROJECT_ROOT = findProjectRoot(__dirname);

/** A path inside the project, from its root: `projectPath('templates', 'otp_sms.txt')`. */
export const projectPath = (...parts: string[]): string => join(PROJECT_ROOT, ...parts);

/*
 * Files a production install reads that are not code (the journeys' SVGs, /flows's stylesheet):
 * `npm run build` copies them into dist/ at their place in the project (scripts/build-assets.ts),
 * because an image carries dist/ and not docs/ or src/. They are found beside the running code:
 * two folders above this module is the project root from src/core/ (tsx, jest) and dist/ from
 * dist/src/core/ (`node dist/src/server.js`), so a build reads its own copy and a checkout the
 * originals.
 */
const CODE_ROOT = join(__dirname, '..', '..');

/** A file the build carries, from where the running code is: `shippedPath('docs', 'journeys')`. */
export const shippedPath = (...parts: string[]): string => join(CODE_ROOT, ...parts);
