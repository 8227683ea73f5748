// Prints one closing line that any CI log reader understands: "jest: N passed, N failed, N skipped",
// and the test files that failed to run at all (their tests are in no count: a file that throws
// while loading would otherwise leave "0 failed" above a failed run). Before it, where the time
// went: each lane's busy seconds and its slowest files, so a slow run says what to look at (every
// file's in .tmp/jest-file-times.tsv).
const { mkdirSync, writeFileSync } = require('node:fs');
const { relative } = require('node:path');

const SLOWEST_SHOWN = 12;

class SummaryReporter {
	constructor() {
		this.files = [];
	}

	onTestFileResult(test, result) {
		const lane = test.context.config.displayName?.name ?? 'all';
		const { start, end } = result.perfStats;
		this.files.push({ lane, path: relative(process.cwd(), test.path), seconds: (end - start) / 1000, start, end });
	}

	onRunComplete(_contexts, results) {
		if (this.files.length > 1) this.printTimes();
		const { numPassedTests, numFailedTests, numPendingTests, numTodoTests, numRuntimeErrorTestSuites } = results;
		const unrun =
			numRuntimeErrorTestSuites > 0
				? `, ${numRuntimeErrorTestSuites} test file${numRuntimeErrorTestSuites === 1 ? '' : 's'} failed to run`
				: '';
		process.stdout.write(
			`jest: ${numPassedTests} passed, ${numFailedTests} failed, ${numPendingTests + numTodoTests} skipped${unrun}\n`,
		);
	}

	printTimes() {
		const lanes = [...new Set(this.files.map((file) => file.lane))].sort();
		const lines = ['', 'where the time went (seconds of each file, from its start to its end):'];
		for (const lane of lanes) {
			const files = this.files.filter((file) => file.lane === lane).sort((a, b) => b.seconds - a.seconds);
			const busy = files.reduce((sum, file) => sum + file.seconds, 0);
			const span = (Math.max(...files.map((f) => f.end)) - Math.min(...files.map((f) => f.start))) / 1000;
			lines.push(`  ${lane}: ${files.length} files, ${busy.toFixed(0)} s of files over ${span.toFixed(0)} s`);
			for (const file of files.slice(0, SLOWEST_SHOWN))
				lines.push(`    ${file.seconds.toFixed(1).padStart(7)}  ${file.path}`);
		}
		process.stdout.write(`${lines.join('\n')}\n\n`);
		const rows = this.files.map((file) => `${file.lane}\t${file.seconds.toFixed(1)}\t${file.path}`);
		mkdirSync('.tmp', { recursive: true });
		writeFileSync('.tmp/jest-file-times.tsv', `lane\tseconds\tfile\n${rows.join('\n')}\n`);
	}
}
module.exports = SummaryReporter;
