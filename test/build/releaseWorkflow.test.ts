// Who can publish, read from the workflows themselves (parsed YAML): the OIDC token and the npm token
// go only to a job that runs no code of the repository or its dependencies and waits for an
// approval; that job publishes the tarballs another job packed; every action is pinned by commit;
// nothing in the release reads a cache.
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { parse } from 'yaml';

interface Step {
	uses?: string;
	run?: string;
	with?: Record<string, unknown>;
	env?: Record<string, unknown>;
}
interface Job {
	needs?: string | string[];
	environment?: string | { name: string };
	permissions?: string | Record<string, string>;
	steps?: Step[];
	env?: Record<string, unknown>;
}
interface Workflow {
	on: Record<string, unknown>;
	permissions?: string | Record<string, string>;
	jobs: Record<string, Job>;
}

const DIR = resolve(__dirname, '../../.github/workflows');
const files = readdirSync(DIR).filter((file) => /\.ya?ml$/.test(file));
const text = (file: string) => readFileSync(join(DIR, file), 'utf8');
const workflow = (file: string) => parse(text(file)) as Workflow;
const release = workflow('release.yml');

/** A job's permissions as GitHub applies them: its own, else the workflow's. */
function permissionsOf(flow: Workflow, job: Job): Record<string, string> {
	const permissions = job.permissions ?? flow.permissions;
	if (permissions === undefined || permissions === 'write-all') return { 'id-token': 'write', contents: 'write' };
	if (permissions === 'read-all') return { contents: 'read' };
	return permissions as Record<string, string>;
}

/**
 * A step that runs code of the repository or of an installed package: a checkout (the repository's
 * scripts and .npmrc are then at hand), an install, a package script, npx, node on a file, an npm
 * command that runs lifecycle scripts, or a publish of the working folder instead of a tarball.
 */
function runsProjectCode(step: Step): string | undefined {
	if (step.uses?.startsWith('actions/checkout@')) return 'a checkout';
	if (!step.run) return undefined;
	for (const line of step.run.split('\n').map((l) => l.trim())) {
		if (
			/\bnpm\s+(ci|install|i|add|rebuild|run|run-script|exec|test|start|pack|explore)\b/.test(line) ||
			/\bnpx\b|\bnode\s+(?!-p\b|-e\b)\S/.test(line)
		)
			return line;
		if (
			/\bnpm\s+publish\b/.test(line) &&
			!(/\S+\.tgz\b/.test(line) && line.includes('--ignore-scripts') && line.includes('--provenance'))
		)
			return line;
	}
	return undefined;
}

const jobsOf = (file: string) =>
	Object.entries(workflow(file).jobs).map(([name, job]) => ({ file, name, job, flow: workflow(file) }));
const allJobs = files.flatMap(jobsOf);

test('no job that can mint the OIDC token or read a secret runs repository or dependency code', () => {
	const privileged = allJobs.filter(
		({ job, flow }) =>
			permissionsOf(flow, job)['id-token'] === 'write' || /\$\{\{\s*secrets\./.test(JSON.stringify(job)),
	);
	expect(privileged.map(({ file, name }) => `${file}: ${name}`)).toEqual(['release.yml: publish']);
	const offending = privileged.flatMap(({ name, job }) =>
		(job.steps ?? [])
			.map((step) => runsProjectCode(step))
			.filter(Boolean)
			.map((what) => `${name}: ${what}`),
	);
	expect(offending).toEqual([]);
});

test('the publish job: after the build, approved in the npm-publish environment, id-token and contents: read only, the packed tarballs only', () => {
	const { publish, build } = release.jobs;
	expect(publish.needs).toBe('build');
	expect(publish.environment).toBe('npm-publish');
	expect(publish.permissions).toEqual({ 'id-token': 'write', contents: 'read' });
	const runs = (publish.steps ?? []).map((step) => step.run ?? '').join('\n');
	expect(runs).not.toMatch(/npm config set|_authToken=\$\{?NPM_TOKEN|_authToken=[^$\\]/);
	expect(runs).toMatch(
		/npm publish "packed\/\$\{name\}-\$\{version\}\.tgz" --provenance --access public --ignore-scripts/,
	);

	// The tarballs are the build job's artifact; the build job cannot mint the token.
	const uploaded = (build.steps ?? []).find((step) => step.uses?.startsWith('actions/upload-artifact@'));
	const downloaded = (publish.steps ?? []).find((step) => step.uses?.startsWith('actions/download-artifact@'));
	expect(uploaded?.with).toMatchObject({ name: 'npm-tarballs', path: 'packed/*.tgz', 'if-no-files-found': 'error' });
	expect(downloaded?.with).toMatchObject({ name: 'npm-tarballs', path: 'packed' });
	expect(build.permissions).toEqual({ contents: 'read' });
	expect((build.steps ?? []).map((step) => step.run ?? '').join('\n')).toContain(
		'npm run pack:runner -- --pack-destination packed',
	);
	expect(release.permissions).toEqual({ contents: 'read' });
	// Only a version tag starts a release.
	expect(release.on).toEqual({ push: { tags: ['v*'] } });
});

test('every action is pinned by a full commit id, its release named beside it', () => {
	const uses = files.flatMap((file) =>
		text(file)
			.split('\n')
			.filter((line) => /^\s*(-\s+)?uses:/.test(line))
			.map((line) => ({ file, line: line.trim() })),
	);
	expect(uses.length).toBeGreaterThan(5);
	const unpinned = uses.filter(({ line }) => !/uses: [\w.-]+\/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/.test(line));
	expect(unpinned).toEqual([]);
	// The YAML agrees with the lines read (no uses: hidden in another form).
	const parsed = allJobs.flatMap(({ job }) => (job.steps ?? []).filter((step) => step.uses).map((step) => step.uses));
	expect(parsed).toHaveLength(uses.length);
});

test('nothing in the release workflow reads or writes a cache', () => {
	const steps = Object.values(release.jobs).flatMap((job) => job.steps ?? []);
	expect(steps.filter((step) => step.uses?.startsWith('actions/cache'))).toEqual([]);
	const setupNode = steps.filter((step) => step.uses?.startsWith('actions/setup-node@'));
	expect(setupNode.length).toBeGreaterThan(0);
	for (const step of setupNode) {
		expect(step.with?.cache).toBeUndefined();
		expect(step.with?.['package-manager-cache']).toBe(false);
	}
});

test('the build job prints the install line of the tarball it hands to the publish job, in the job summary too', () => {
	const steps = release.jobs.build.steps ?? [];
	const upload = steps.findIndex((step) => step.uses?.startsWith('actions/upload-artifact@'));
	const line = steps.findIndex((step) =>
		step.run?.includes('node scripts/install-line.mjs "packed/n8n-nodes-convo-${version}.tgz"'),
	);
	expect(line).toBeGreaterThan(-1);
	expect(line).toBeLessThan(upload);
	expect(steps[line].run).toContain('>> "${GITHUB_STEP_SUMMARY}"');
	// Nothing rewrites packed/ between the line and the upload.
	expect(steps.slice(line + 1, upload).filter((step) => step.run)).toEqual([]);
});
