const { createHash } = require('node:crypto');

/*
 * Jest transform for PGlite's CommonJS build (the embedded database, src/core/database): it loads
 * Node's built-in modules with `import("fs/promises")`, which Jest's CommonJS runtime cannot run
 * without --experimental-vm-modules. Here each such import of a built-in module becomes a
 * require, so the tests run the package's own code, unflagged. Node itself runs it unchanged.
 */
module.exports = {
  process(source) {
    const code = source.replace(
      /\bimport\("((?:node:)?[a-z_/]+)"\)/g,
      (_, name) => `Promise.resolve(__lfaRequire(${JSON.stringify(name)}))`,
    );
    return { code: `const __lfaRequire = require;\n${code}` };
  },
  getCacheKey(source, fileName) {
    return createHash('sha256').update('pglite-v1\0').update(fileName).update('\0').update(source).digest('hex');
  },
};
