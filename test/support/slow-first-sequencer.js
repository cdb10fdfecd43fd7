// Jest runs its files longest first when it remembers their durations (its cache); on a fresh
// clone (CI) it knows only their sizes, and a minute-long file started last leaves one of the two
// workers idle for that minute. These are the files that take longest on two cores, longest first;
// every other file keeps Jest's own order after them.
const Sequencer = require('@jest/test-sequencer').default;

const SLOW_FIRST = [
  'test/scripts/drill.test.ts',
  'test/bench/bench.test.ts',
  'test/security/campaign-shapes.test.ts',
  'test/server/compiled-start.test.ts',
  'test/domain/passkeys/store.test.ts',
  'test/server/production-install.test.ts',
  'test/e2e/demo-page.test.ts',
  'test/client/packed.test.ts',
  'test/server/production-mode.test.ts',
  'test/http/hostile-input.test.ts',
  'test/docs/document-requests.test.ts',
];

class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const rank = (test) => {
      const i = SLOW_FIRST.findIndex((path) => test.path.endsWith(path));
      return i === -1 ? SLOW_FIRST.length : i;
    };
    // Array.prototype.sort is stable: the rest stay in the order Jest chose.
    return [...super.sort(tests)].sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = SlowFirstSequencer;
