const http = require('node:http');
const https = require('node:https');
const { TestEnvironment } = require('jest-environment-node');

/*
 * Jest's node environment, leaving node:http and node:https as it found them. nock replaces
 * their request functions when it is imported and nothing puts them back at the end of a file;
 * the modules are shared by every file the worker runs after, so a file that needs the real
 * client (test/clients/http-wire.test.ts reads what goes on the wire) would otherwise get the
 * fake of whichever file ran before it.
 */
const PATCHABLE = [
  [http, ['ClientRequest', 'request', 'get']],
  [https, ['request', 'get']],
];

class NodeEnvironment extends TestEnvironment {
  async setup() {
    await super.setup();
    this.originals = PATCHABLE.flatMap(([module, names]) => names.map((name) => [module, name, module[name]]));
  }

  async teardown() {
    for (const [module, name, value] of this.originals ?? []) module[name] = value;
    await super.teardown();
  }
}

module.exports = NodeEnvironment;
