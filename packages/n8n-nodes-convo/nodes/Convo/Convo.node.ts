import type { INodeTypeBaseDescription, IVersionedNodeType } from 'n8n-workflow';
import { VersionedNodeType } from 'n8n-workflow';

import { ConvoV1 } from './v1/ConvoV1';

/**
 * The Convo node, versioned: workflows keep the version they were built with, so a v2 can change
 * fields without breaking them. A minor version that only changes defaults stays in v1/ (see
 * ConvoV1); a new major version is a file beside v1/ and one line below.
 */
export class Convo extends VersionedNodeType {
	constructor() {
		const baseDescription: INodeTypeBaseDescription = {
			displayName: 'Convo',
			name: 'convo',
			icon: { light: 'file:convo.svg', dark: 'file:convo.dark.svg' },
			group: ['output'],
			subtitle: '={{ $parameter["operation"] + ": " + $parameter["resource"] }}',
			description:
				'Send WhatsApp messages and templates, manage contacts, conversations, ' +
				'search items and AI agents with Convo; run campaigns and reindexes through convo-runner',
			usableAsTool: true,
			defaultVersion: 1.1,
		};
		const v1 = new ConvoV1(baseDescription);
		const nodeVersions: IVersionedNodeType['nodeVersions'] = { 1: v1, 1.1: v1 };
		super(nodeVersions, baseDescription);
	}
}
