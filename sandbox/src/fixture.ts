/**
 * The deterministic fixture: two businesses with the same identifiers and secrets on every start
 * (Acme Coffee with ten sending numbers, Bolt Bikes with two).
 * Times are relative to service time at seeding, so "recent" and "older than 24 h" stay true.
 */
import { stableToken, stableUuid } from './ids';
import type { Business, TemplateKind } from './model';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

interface FixtureTemplate {
	id: string;
	name: string;
	kind: TemplateKind;
	variables: string[];
	buttons: { index: number; sub_type: 'url'; url: string }[];
}

interface FixtureContact {
	uuid: string;
	name: string;
	phoneNumber: string;
	inWindow: boolean;
	undeliverable: boolean;
	customFields: Record<string, unknown>;
}

/** A business as tests and demos see it: its own record plus what it owns. */
interface FixtureBusiness extends Business {
	templates: FixtureTemplate[];
	collections: { id: string; name: string; embedding_fields: string[] }[];
	contacts: FixtureContact[];
	agents: { id: string; name: string }[];
}

export interface Fixture {
	baseUrl: string;
	externalUrl: string;
	businesses: FixtureBusiness[];
}

/** How the seed builds each contact's history (not part of the published fixture). */
interface ContactSeed extends FixtureContact {
	/** Age of the last inbound message at seeding, in ms. */
	lastInboundAgoMs: number;
	tags: string[];
}

export interface BusinessSeed extends Omit<FixtureBusiness, 'contacts'> {
	contacts: ContactSeed[];
	templateBodies: Record<string, string>;
	domain: string;
}

/** Prefix of every fixture API key: SPEC 5 says live keys carry a fixed textual prefix. */
export const API_KEY_PREFIX = 'live_sbx_';
/** Prefix of every fixture access token, so a token sent as an API key is recognised. */
export const ACCESS_TOKEN_PREFIX = 'sbx_at_';

interface PersonDef {
	name: string;
	digits: string;
	inWindow: boolean;
	undeliverable: boolean;
	customFields: Record<string, unknown>;
	tags: string[];
}

/**
 * `numbers`: the business's sending numbers, `<country>30100200<index><n>` for n from 0; Acme has
 * ten, so a benchmark can run campaigns on ten numbers of one account (bench/numbers.bench.ts).
 */
function business(
	index: number,
	name: string,
	domain: string,
	country: string,
	numbers: number,
	people: PersonDef[],
): BusinessSeed {
	const id = (label: string) => stableUuid(`b${index}:${label}`);
	const templates: FixtureTemplate[] = [
		{ id: id('tpl:order_update'), name: 'order_update', kind: 'positional', variables: ['1', '2'], buttons: [] },
		{
			id: id('tpl:welcome_named'),
			name: 'welcome_named',
			kind: 'named',
			variables: ['first_name', 'order_id'],
			buttons: [],
		},
		{
			id: id('tpl:track_package'),
			name: 'track_package',
			kind: 'urlButton',
			variables: [],
			buttons: [{ index: 0, sub_type: 'url', url: `https://track.${domain}/p/{{1}}` }],
		},
	];
	return {
		id: id('business'),
		name,
		domain,
		accessToken: `${ACCESS_TOKEN_PREFIX}${stableToken(`b${index}:token`)}`,
		apiKey: `${API_KEY_PREFIX}${stableToken(`b${index}:apikey`)}`,
		channelUuid: id('channel'),
		phoneNumbers: Array.from({ length: numbers }, (_, n) => `${country}30100200${index}${n}`),
		users: [`owner@${domain}`, `agent@${domain}`],
		teams: [id('team:support'), id('team:sales')],
		templates,
		templateBodies: {
			order_update: 'Hello {{1}}, your order {{2}} has shipped.',
			welcome_named: 'Hi {{first_name}}, thanks for your order {{order_id}}.',
			track_package: 'Your package is on its way. Track it with the button below.',
		},
		collections: [{ id: id('collection:products'), name: 'Products', embedding_fields: ['title', 'description'] }],
		contacts: people.map((person) => ({
			uuid: id(`contact:${person.digits}`),
			name: person.name,
			phoneNumber: `+${person.digits}`,
			inWindow: person.inWindow,
			undeliverable: person.undeliverable,
			customFields: person.customFields,
			tags: person.tags,
			lastInboundAgoMs: person.inWindow ? 1 * HOUR : 3 * DAY,
		})),
		agents: [{ id: id('agent:support'), name: 'Support assistant' }],
		fieldKeys: ['customer_tier', 'city', 'order_ref'],
	};
}

/** The seeds of both businesses. Contacts 0 and 1 of each business share customer_tier (B7 409). */
export function businessSeeds(): BusinessSeed[] {
	return [
		business(0, 'Acme Coffee', 'acme-coffee.example', '49', 10, [
			{
				name: 'Ada Lovelace',
				digits: '4915112340001',
				inWindow: true,
				undeliverable: false,
				customFields: { customer_tier: 'gold', city: 'Berlin', order_ref: 'A-100' },
				tags: ['vip'],
			},
			{
				name: 'Grace Hopper',
				digits: '4915112340002',
				inWindow: false,
				undeliverable: false,
				customFields: { customer_tier: 'gold', city: 'Munich', order_ref: 'A-101' },
				tags: [],
			},
			{
				name: 'Alan Turing',
				digits: '4915112340003',
				inWindow: true,
				undeliverable: true,
				customFields: { customer_tier: 'silver', city: 'Hamburg' },
				tags: ['blocked'],
			},
			{
				name: 'Katherine Johnson',
				digits: '4915112340004',
				inWindow: false,
				undeliverable: false,
				customFields: { customer_tier: 'bronze', city: 'Cologne' },
				tags: [],
			},
		]),
		business(1, 'Bolt Bikes', 'bolt-bikes.example', '44', 2, [
			{
				name: 'Mary Somerville',
				digits: '447700900001',
				inWindow: true,
				undeliverable: false,
				customFields: { customer_tier: 'gold', city: 'London' },
				tags: ['vip'],
			},
			{
				name: 'Charles Babbage',
				digits: '447700900002',
				inWindow: false,
				undeliverable: false,
				customFields: { customer_tier: 'gold', city: 'Leeds' },
				tags: [],
			},
			{
				name: 'Tim Berners-Lee',
				digits: '447700900003',
				inWindow: true,
				undeliverable: true,
				customFields: { customer_tier: 'silver', city: 'Bristol' },
				tags: [],
			},
		]),
	];
}

/** The published fixture (GET /__sandbox/fixture). */
export function describeFixture(baseUrl: string, externalUrl: string): Fixture {
	return {
		baseUrl,
		externalUrl,
		businesses: businessSeeds().map((seed) => ({
			id: seed.id,
			name: seed.name,
			accessToken: seed.accessToken,
			apiKey: seed.apiKey,
			channelUuid: seed.channelUuid,
			phoneNumbers: seed.phoneNumbers,
			users: seed.users,
			teams: seed.teams,
			templates: seed.templates,
			collections: seed.collections,
			contacts: seed.contacts.map(({ uuid, name, phoneNumber, inWindow, undeliverable, customFields }) => ({
				uuid,
				name,
				phoneNumber,
				inWindow,
				undeliverable,
				customFields,
			})),
			agents: seed.agents,
			fieldKeys: seed.fieldKeys,
		})),
	};
}

export const FIXTURE_TIMES = { HOUR, DAY };
