import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { docGenerators } from '../../scripts/docs';

// Generated files are never edited by hand: each must equal what its generator renders now.
describe('generated docs', () => {
  it('has generators registered', () => {
    expect(docGenerators.length).toBeGreaterThan(0);
  });

  // The journey SVGs are rendered by Mermaid in Debian's Chromium (scripts/docs/mermaid-svg.ts), started here for all of
  // them at once by the first that renders; without /usr/bin/chromium that test fails and says how to install it.
  it.each(docGenerators.map((g) => [g.path, g] as const))(
    '%s is up to date (run `npm run docs`)',
    async (path, generator) => {
      const committed = readFileSync(join(__dirname, '..', '..', path), 'utf8');
      expect(committed).toBe(await generator.render());
    },
    60_000,
  );
});
