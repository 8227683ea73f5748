// Prints one closing line that any CI log reader understands: "jest: N passed, N failed, N skipped".
class SummaryReporter {
	onRunComplete(_contexts, results) {
		const { numPassedTests, numFailedTests, numPendingTests, numTodoTests } = results;
		process.stdout.write(`jest: ${numPassedTests} passed, ${numFailedTests} failed, ${numPendingTests + numTodoTests} skipped\n`);
	}
}
module.exports = SummaryReporter;
