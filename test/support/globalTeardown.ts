/** Undoes globalSetup.ts once every test file has run: stops the shared redis-servers, removes the bundles. */
import { rmSync } from 'node:fs';

import type { TestRunResources } from './testRun';

export default async function globalTeardown(): Promise<void> {
	const resources = (globalThis as { convoTestRun?: TestRunResources }).convoTestRun;
	if (!resources) return;
	await Promise.all(resources.servers.map((server) => server.stop()));
	for (const folder of resources.folders) rmSync(folder, { recursive: true, force: true });
}
