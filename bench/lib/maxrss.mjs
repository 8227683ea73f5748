// Preloaded with NODE_OPTIONS=--import into a child process whose peak RSS a benchmark wants
// after it has exited (when /proc/<pid>/status is gone): getrusage's maxRSS, in kB, to a file.
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
	if (process.env.BENCH_MAXRSS_FILE)
		writeFileSync(process.env.BENCH_MAXRSS_FILE, String(process.resourceUsage().maxRSS));
});
