// The import rules `npm run lint` enforces, shown to bite on planted imports: an import cycle
// (lint:cycles, dependency-cruiser, type imports counted) in a copy of runner/src, and a runner
// client importing past its domain's door (lint:ts, the client-boundary rule of eslint.config.mjs).
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const bin = (name: string) => join(ROOT, 'node_modules/.bin', name);
const run = (command: string, args: string[], input?: string) =>
	spawnSync(command, args, { cwd: ROOT, encoding: 'utf8', input, timeout: 60_000 });

describe('lint:cycles', () => {
	it('fails on a planted type-only import cycle in a copy of runner/src, naming the planted import', () => {
		const dir = mkdtempSync(join(tmpdir(), 'convo-cycles-'));
		try {
			const src = join(dir, 'src');
			cpSync(join(ROOT, 'runner/src'), src, { recursive: true });
			// context.ts names RedisConnection from redis.ts; redis.ts naming RunnerContext closes a cycle.
			const redis = join(src, 'redis.ts');
			writeFileSync(
				redis,
				`import type { RunnerContext } from './context';\nexport type Planted = RunnerContext;\n${readFileSync(redis, 'utf8')}`,
			);
			// The reporter `npm run lint:cycles` uses: its exit code is the number of violations.
			const cruise = run(bin('depcruise'), ['--config', '.dependency-cruiser.cjs', '--output-type', 'err', src]);
			expect(cruise.status).not.toBe(0);
			const cycles = cruise.stdout.split('error no-circular:').slice(1);
			expect(cycles.length).toBeGreaterThan(0);
			// Every cycle found goes through the planted import (the copy was cycle-free before it).
			for (const cycle of cycles) expect(cycle).toMatch(/src\/redis\.ts →\s+\S*src\/context\.ts/);
		} finally {
			rmSync(dir, { recursive: true, force: true });
		}
	});
});

describe('the client-boundary rule (lint:ts)', () => {
	const lintAs = (path: string, code: string) => {
		const lint = run(
			bin('eslint'),
			['--config', 'eslint.config.mjs', '--format', 'json', '--stdin', '--stdin-filename', path],
			code,
		);
		const [result] = JSON.parse(lint.stdout) as Array<{ messages: Array<{ ruleId: string | null; line: number }> }>;
		return result.messages
			.filter((message) => message.ruleId === '@typescript-eslint/no-restricted-imports')
			.map((message) => message.line);
	};

	it('refuses a client importing a store, a domain module or Redis, and lets it through the doors', () => {
		const lines = [
			"import { createCampaign } from '../core/campaigns';",
			"import { addSuppression } from '../core/audience';",
			"import { createReindex } from '../core/reindex';",
			"import { listWebhooks } from '../core/webhooks';",
			"import { liveRunners } from '../core/runners';",
			"import { UserError } from '../errors';",
			"import type { RunnerContext } from '../context';",
			"import { getCampaign } from '../campaigns/store';",
			"import { suppress } from '../audience/suppression';",
			"import { getRun } from '../reindex/store';",
			"import { redisScript } from '../redisScripts';",
			"import * as context from '../context';",
		];
		const code = `${lines.join('\n')}\nexport const used = [createCampaign, addSuppression, createReindex, listWebhooks, liveRunners, UserError, getCampaign, suppress, getRun, redisScript, context];\nexport type Used = RunnerContext;\n`;
		const refused = [8, 9, 10, 11, 12];
		expect(lintAs('runner/src/http/planted.ts', code)).toEqual(refused);
		expect(lintAs('runner/src/cli/planted.ts', code)).toEqual(refused);
	});
});
