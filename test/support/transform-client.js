/*
 * Jest transform for the typed client's sources (client/src): an ES module package
 * ("type": "module"), which ts-jest under the root tsconfig (module node16) would emit as ES
 * modules that Jest's CommonJS runtime cannot load. Here they are transpiled to CommonJS, like
 * every other TypeScript file in the tests; types are checked by `tsc -p client`.
 */
const { createHash } = require('node:crypto');
const ts = require('typescript');

const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  inlineSourceMap: true,
  inlineSources: true,
};

module.exports = {
  process(source, fileName) {
    return { code: ts.transpileModule(source, { fileName, compilerOptions }).outputText };
  },
  getCacheKey(source, fileName) {
    return createHash('sha256')
      .update(ts.version)
      .update('\0')
      .update(fileName)
      .update('\0')
      .update(source)
      .digest('hex');
  },
};
