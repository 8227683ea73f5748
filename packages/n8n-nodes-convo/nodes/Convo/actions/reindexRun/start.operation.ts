import type { IDataObject, IExecuteFunctions, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import type { StartReindexBody } from '../../../shared/runnerApi/reindex';
import { DEFAULT_REINDEX_RATE, RATE_BOUNDS } from '../../../shared/runnerRoutes';

import { runnerAnswer } from '../../transport/runner';
import { fieldLabels } from '../../helpers/fieldLabels';
import { jsonObjectParameter } from '../../helpers/json';
import { identifierField, identifierValue } from '../../descriptions/common.description';

const properties: INodeProperties[] = [
	identifierField({
		displayName: 'Collection ID',
		name: 'collectionId',
		description: 'ID of the search collection to keep in sync, shown with the collection in the Convo dashboard',
	}),
	{
		displayName: 'Source',
		name: 'source',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. https://shop.example.com/feed.ndjson',
		description:
			'The feed: an http(s) URL the runner reads, or a file in the directory its operator opened to the API ' +
			'(RUNNER_SOURCE_DIR), by its path or its name there. It must stay reachable: ' +
			'the runner reads it again after a crash.',
	},
	{
		displayName: 'Format',
		name: 'format',
		type: 'options',
		options: [
			{ name: 'CSV', value: 'csv', description: 'A header line, then one item per row (cells stay text)' },
			{
				name: 'From the Source Name',
				value: 'auto',
				description: 'By the file ending of the URL or path (CSV, JSON array or NDJSON)',
			},
			{ name: 'JSON Array', value: 'json', description: 'One JSON array of objects' },
			{ name: 'NDJSON', value: 'ndjson', description: 'One JSON object per line' },
		],
		default: 'auto',
		description: 'How the feed is written',
	},
	{
		displayName: 'ID Field',
		name: 'idField',
		type: 'string',
		required: true,
		default: 'id',
		placeholder: 'e.g. sku',
		description: 'Field of each feed item that holds its ID (the external ID of the search item)',
	},
	{
		displayName: 'Additional Fields',
		name: 'additionalFields',
		type: 'collection',
		placeholder: 'Add Field',
		default: {},
		description: 'Optional settings of the run',
		options: [
			{
				displayName: 'Deactivate Missing',
				name: 'deactivateMissing',
				type: 'boolean',
				default: false,
				description:
					'Whether items the runner sent before but the feed no longer holds are set inactive ' +
					'(only after the whole feed was read without a rejected row)',
			},
			{
				displayName: 'Dry Run',
				name: 'dryRun',
				type: 'boolean',
				default: false,
				description:
					'Whether to only read the feed and answer what a run would do (created, updated, unchanged, ' +
					'deactivated and rejected counts, and whether Max Deactivate would stop it), ' +
					'writing and sending nothing',
			},
			{
				displayName: 'Embedding JSON',
				name: 'embeddingJson',
				type: 'json',
				default: '{}',
				description: 'One embedding_json object sent with every item, e.g. {"fields": ["title", "description"]}',
			},
			{
				displayName: 'Force',
				name: 'force',
				type: 'boolean',
				default: false,
				description: 'Whether every item is sent, including those unchanged since the last successful upsert',
			},
			{
				displayName: 'Force Deactivate',
				name: 'forceDeactivate',
				type: 'boolean',
				default: false,
				description: 'Whether Deactivate Missing deactivates however many items that is, beyond Max Deactivate',
			},
			{
				displayName: 'Max Deactivate',
				name: 'maxDeactivate',
				type: 'string',
				default: '10%',
				placeholder: 'e.g. 10% or 50',
				description:
					'With Deactivate Missing: if more items than this would be deactivated ' +
					"(a share of the collection's active items, or a number of items), " +
					'the run deactivates nothing and fails, so a wrong or empty feed cannot empty the collection',
			},
			{
				displayName: 'Rate (Upserts per Second)',
				name: 'rate',
				type: 'number',
				typeOptions: { minValue: RATE_BOUNDS.min, maxValue: RATE_BOUNDS.max },
				default: DEFAULT_REINDEX_RATE,
				description:
					'How many items per second the runner sends (the service allows about 300 requests per second per account)',
			},
		],
	},
];

export const description = updateDisplayOptions(
	{ show: { resource: ['reindexRun'], operation: ['start'] } },
	properties,
);

/** The parameter that fills each runner API field, so errors name fields by their labels. */
export const apiFields: Readonly<Record<string, string>> = {
	collection_id: 'collectionId',
	source: 'source',
	format: 'format',
	id_field: 'idField',
	embedding_json: 'additionalFields.embeddingJson',
	deactivate_missing: 'additionalFields.deactivateMissing',
	force: 'additionalFields.force',
	max_deactivate: 'additionalFields.maxDeactivate',
	force_deactivate: 'additionalFields.forceDeactivate',
	dry_run: 'additionalFields.dryRun',
	rate: 'additionalFields.rate',
};

/**
 * Asks the runner to sync the collection with the feed; answers the run's status (its id for Get).
 * No Idempotency-Key is needed: a second run of a collection while one runs is refused (409), and
 * one after it sends only what changed.
 */
const labelOf = fieldLabels({ description, apiFields });

export async function execute(this: IExecuteFunctions, itemIndex: number): Promise<IDataObject> {
	const body: StartReindexBody = {
		collection_id: identifierValue.call(this, 'collectionId', itemIndex),
		source: String(this.getNodeParameter('source', itemIndex, '')).trim(),
		id_field: String(this.getNodeParameter('idField', itemIndex, '')).trim(),
	};
	const format = this.getNodeParameter('format', itemIndex, 'auto') as string;
	if (format !== 'auto') body.format = format as StartReindexBody['format'];
	const extra = this.getNodeParameter('additionalFields', itemIndex, {}) as IDataObject;
	const embedding = jsonObjectParameter.call(this, extra.embeddingJson, 'Embedding JSON', itemIndex);
	if (embedding !== undefined && Object.keys(embedding).length > 0) body.embedding_json = embedding;
	if (extra.deactivateMissing === true) body.deactivate_missing = true;
	if (extra.force === true) body.force = true;
	if (typeof extra.maxDeactivate === 'string' && extra.maxDeactivate.trim() !== '')
		body.max_deactivate = extra.maxDeactivate.trim();
	if (extra.forceDeactivate === true) body.force_deactivate = true;
	if (extra.dryRun === true) body.dry_run = true;
	if (extra.rate !== undefined) body.rate = extra.rate as number;
	return (await runnerAnswer(this, 'startReindex', {
		body: body as IDataObject,
		itemIndex,
		labelOf,
	})) as IDataObject;
}
