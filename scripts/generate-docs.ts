import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { docGenerators } from './docs';

/** `npm run docs`: regenerates every generated file under docs/ from the code that defines it. */
async function main(): Promise<void> {
  const root = join(__dirname, '..');
  for (const generator of docGenerators) {
    const target = join(root, generator.path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, await generator.render());
    process.stdout.write(`wrote ${generator.path}\n`);
  }
}

void main();
