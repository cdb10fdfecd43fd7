// Prints one plain closing line that CI reads whatever the runner: "jest: N passed, N failed, N skipped".
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests, numRuntimeErrorTestSuites } = results;
    // A suite that failed to load counts as a failure even though none of its tests ran.
    const failed = numFailedTests + numRuntimeErrorTestSuites;
    process.stdout.write(
      `\njest: ${numPassedTests} passed, ${failed} failed, ${numPendingTests + numTodoTests} skipped\n`,
    );
  }
}
module.exports = SummaryReporter;
