import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { docGenerators } from '../../scripts/docs';

// Generated files are never edited by hand: each must equal what its generator renders now.
describe('generated docs', () => {
  it('has generators registered', () => {
    expect(docGenerators.length).toBeGreaterThan(0);
  });

  it.each(docGenerators.map((g) => [g.path, g] as const))('%s is up to date (run `npm run docs`)', async (path, generator) => {
    const committed = readFileSync(join(__dirname, '..', '..', path), 'utf8');
    expect(committed).toBe(await generator.render());
  });
});
