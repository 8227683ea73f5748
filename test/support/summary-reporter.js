// Prints one closing line that any CI log reader understands: "jest: N passed, N failed, N skipped",
// and the test files that failed to run at all (their tests are in no count: a file that throws
// while loading would otherwise leave "0 failed" above a failed run).
class SummaryReporter {
	onRunComplete(_contexts, results) {
		const { numPassedTests, numFailedTests, numPendingTests, numTodoTests, numRuntimeErrorTestSuites } = results;
		const unrun =
			numRuntimeErrorTestSuites > 0
				? `, ${numRuntimeErrorTestSuites} test file${numRuntimeErrorTestSuites === 1 ? '' : 's'} failed to run`
				: '';
		process.stdout.write(
			`jest: ${numPassedTests} passed, ${numFailedTests} failed, ${numPendingTests + numTodoTests} skipped${unrun}\n`,
		);
	}
}
module.exports = SummaryReporter;
