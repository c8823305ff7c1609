// Prints one plain closing line, `tests: N passed, N failed`, after jest's own summary, so that
// tools reading the last lines of a run (CI) see the counts in a runner-independent form.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const suiteErrors = results.numRuntimeErrorTestSuites;
    const failed = results.numFailedTests + suiteErrors;
    process.stdout.write(
      `tests: ${results.numPassedTests} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`,
    );
  }
}
module.exports = SummaryReporter;
