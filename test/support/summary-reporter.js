// Prints one plain closing line that CI reads whatever the runner: "jest: N passed, N failed, N skipped".
//
// `npm test` runs Jest twice (scripts/test.sh: the bench's real runs alone, after the rest), yet
// the closing line must count both. With JEST_SUMMARY_CARRY naming a file, a run marked
// JEST_SUMMARY_PART=first writes its counts there and prints them as a part; the next run adds
// them to its own before printing the closing line.
const { existsSync, readFileSync, writeFileSync } = require('node:fs');

class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests, numRuntimeErrorTestSuites } = results;
    // A suite that failed to load counts as a failure even though none of its tests ran.
    const counts = {
      passed: numPassedTests,
      failed: numFailedTests + numRuntimeErrorTestSuites,
      skipped: numPendingTests + numTodoTests,
    };
    const carry = process.env.JEST_SUMMARY_CARRY;
    if (carry && process.env.JEST_SUMMARY_PART === 'first') {
      writeFileSync(carry, JSON.stringify(counts));
      process.stdout.write(`\njest, first part: ${line(counts)}\n`);
      return;
    }
    if (carry && existsSync(carry)) {
      const text = readFileSync(carry, 'utf8');
      // An empty file: the first part never reached its end (Jest itself failed), a failure to count.
      const earlier = text ? JSON.parse(text) : { passed: 0, failed: 1, skipped: 0 };
      for (const key of Object.keys(counts)) counts[key] += earlier[key];
    }
    process.stdout.write(`\njest: ${line(counts)}\n`);
  }
}

const line = ({ passed, failed, skipped }) => `${passed} passed, ${failed} failed, ${skipped} skipped`;

module.exports = SummaryReporter;
