/*
 * The layers of docs/architecture.md, checked by `npm run check:layers` (and so by `npm test`):
 *
 *   entry (src/server.ts, src/service.ts) -> http -> actions -> flows -> domain -> clients -> core
 *                                                      \-> machines (imports only xstate and itself;
 *                                                          its definitions never import machines/diagrams/)
 *
 * Each layer may import itself and any layer below it (a content action may call its client
 * directly; every identity sequence lives once in the domain); nothing imports upwards, nothing in
 * src/ or machines/ imports test/, bench/ or scripts/, and there is no import cycle anywhere.
 * Type-only imports count like any other: a type is a dependency a reader has to follow.
 */

const layer = (name, path, mayImport) => ({
  name: `${name}-imports-only-below`,
  comment: `${name} may import only: ${mayImport.join(', ')}`,
  severity: 'error',
  from: { path },
  to: { path: '^(src|machines)/', pathNot: mayImport.map((p) => `^${p}`) },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle makes two modules one: break it by moving what both need one layer down.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'machines-import-only-xstate',
      comment: 'Machines are pure definitions: src/ provides their effects (machine.provide).',
      severity: 'error',
      from: { path: '^machines/' },
      to: { pathNot: ['^machines/', '^node_modules/xstate/', '^node_modules/@xstate/'], dependencyTypesNot: ['core'] },
    },
    {
      name: 'machine-definitions-never-import-their-diagrams',
      comment:
        'machines/diagrams/ draws and replays the definitions (diagrams, journeys, labels); a definition or what runs it never depends on its picture. index.ts re-exports both.',
      severity: 'error',
      from: { path: '^machines/', pathNot: ['^machines/diagrams/', '^machines/index\\.ts$'] },
      to: { path: '^machines/diagrams/' },
    },
    {
      name: 'product-code-never-imports-tests-or-tools',
      severity: 'error',
      from: { path: '^(src|machines)/' },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'only-clients-speak-upstream',
      comment:
        'HTTP and SMTP to the upstreams go through src/clients (one place for timeouts, logs, metrics, error mapping).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/clients/' },
      to: { path: '^node_modules/(axios|nodemailer)/' },
    },
    {
      name: 'production-code-needs-only-dependencies',
      comment:
        'A production install (npm prune --omit=dev) has no devDependencies: src/ and machines/ import only dependencies (a type-only import is erased by the build). The sandbox alone runs on devDependencies (smtp-server), and src/service.ts requires it only when sandbox.enabled.',
      severity: 'error',
      from: { path: '^(src|machines)/', pathNot: '^src/sandbox/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    layer('core', '^src/core/', ['src/core/']),
    layer('clients', '^src/clients/', ['src/clients/', 'src/core/']),
    layer('domain', '^src/domain/', ['src/domain/', 'src/clients/', 'src/core/', 'machines/']),
    layer('flows', '^src/flows/', ['src/flows/', 'src/domain/', 'src/clients/', 'src/core/', 'machines/']),
    layer('actions', '^src/actions/', [
      'src/actions/',
      'src/flows/',
      'src/domain/',
      'src/clients/',
      'src/core/',
      'machines/',
    ]),
    layer('http', '^src/http/', [
      'src/http/',
      'src/actions/',
      'src/flows/',
      'src/domain/',
      'src/clients/',
      'src/core/',
      'src/sandbox/',
      'machines/',
    ]),
    // The fakes of the upstreams share the clients' paths and the recorded replies.
    layer('sandbox', '^src/sandbox/', ['src/sandbox/', 'src/clients/', 'src/core/']),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Every package src/ and machines/ import directly (the dependency rules), not what the packages import.
    includeOnly: '^(src|machines|test|bench|scripts|node_modules/)',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
