/**
 * Fixture seeding: turns the fixture's business seeds (fixture.ts) into store records, each with
 * its templates, collections, contacts and their history, and agents. Times are relative to the
 * clock at seeding, so "recent" and "older than 24 h" stay true after a reset.
 */
import { businessSeeds, FIXTURE_TIMES, type BusinessSeed } from './fixture';
import { stableUuid } from './ids';
import type { Business, SearchItem } from './model';
import type { Store } from './store';

/** Adds every fixture business and what it owns to an empty store. */
export function seedFixture(store: Store): void {
	for (const seed of businessSeeds()) seedBusiness(store, seed);
}

function seedBusiness(store: Store, seed: BusinessSeed): void {
	const now = store.clock.now();
	const business = store.addBusiness({
		id: seed.id,
		name: seed.name,
		accessToken: seed.accessToken,
		apiKey: seed.apiKey,
		channelUuid: seed.channelUuid,
		phoneNumbers: [...seed.phoneNumbers],
		users: [...seed.users],
		teams: [...seed.teams],
		fieldKeys: [...seed.fieldKeys],
	});
	for (const template of seed.templates) {
		store.templates.set(template.id, {
			...template,
			businessId: business.id,
			body: seed.templateBodies[template.name],
			variables: [...template.variables],
			buttons: template.buttons.map((button) => ({ ...button })),
		});
	}
	for (const collection of seed.collections) {
		store.collections.set(collection.id, {
			...collection,
			businessId: business.id,
			embedding_fields: [...collection.embedding_fields],
		});
		const at = new Date(now - 7 * FIXTURE_TIMES.DAY).toISOString();
		const item: SearchItem = {
			id: stableUuid(`${collection.id}:item:sku-1`),
			collection_id: collection.id,
			external_id: 'sku-1',
			payload: { title: 'House blend', description: 'Medium roast', price: 12.5 },
			embedding_json: { title: 'House blend', description: 'Medium roast' },
			is_active: true,
			created_at: at,
			updated_at: at,
		};
		store.items.set(collection.id, new Map([[item.external_id, item]]));
	}
	seedContacts(store, business, seed, now);
	for (const agent of seed.agents) {
		const at = new Date(now - 14 * FIXTURE_TIMES.DAY).toISOString();
		store.agents.set(agent.id, {
			id: agent.id,
			businessId: business.id,
			fields: {
				name: agent.name,
				type: 'BASIC',
				system_prompt: `You answer customer questions for ${business.name}.`,
				prompt_config: { tone_prompt: 'Friendly and brief' },
				tools: {
					handoff_to_human_control: { enabled: true, instructions: 'Hand over when the customer asks for a person.' },
				},
				data: {},
				activation_rules: { always_on: true },
				follow_up_settings: { enabled: false },
				inactivity_run_settings: { enabled: false },
				provider: 'openai',
				model: 'gpt-4o-mini',
				created_at: at,
				updated_at: at,
			},
		});
	}
}

/** Each contact with one conversation and a three-message history around its last inbound message. */
function seedContacts(store: Store, business: Business, seed: BusinessSeed, now: number): void {
	const businessNumber = business.phoneNumbers[0];
	for (const person of seed.contacts) {
		const createdMs = now - 30 * FIXTURE_TIMES.DAY;
		const contact = store.addContact({
			uuid: person.uuid,
			businessId: business.id,
			name: person.name,
			phoneNumber: person.phoneNumber,
			avatarUrl: null,
			createdAt: new Date(createdMs).toISOString(),
			source: 'whatsapp',
			tags: [...person.tags],
			assignedUser: null,
			customFields: structuredClone(person.customFields),
			undeliverable: person.undeliverable,
		});
		store.addConversation({
			id: stableUuid(`${contact.uuid}:conversation`),
			businessId: business.id,
			contactUuid: contact.uuid,
			platform: 'whatsapp',
			createdAt: new Date(createdMs).toISOString(),
			closedAt: null,
			tags: [...contact.tags],
			agentId: null,
			assignedUser: null,
			teamUuid: null,
		});
		const digits = contact.phoneNumber.slice(1);
		const inboundAt = now - person.lastInboundAgoMs;
		const history: Array<[number, 'inbound' | 'outbound', string]> = [
			[inboundAt - 2 * FIXTURE_TIMES.HOUR, 'outbound', `Welcome to ${business.name}!`],
			[inboundAt, 'inbound', 'Hi, where is my order?'],
			[inboundAt + 5 * 60 * 1000, 'outbound', 'It left our warehouse this morning.'],
		];
		history.forEach(([atMs, direction, text], index) => {
			store.addMessage({
				business,
				contact,
				direction,
				origin: direction === 'inbound' ? 'inbound' : 'fixture',
				from: direction === 'inbound' ? digits : businessNumber,
				to: direction === 'inbound' ? businessNumber : digits,
				text,
				atMs,
				uuid: stableUuid(`${contact.uuid}:message:${index}`),
			});
		});
	}
}
