import {
	buildRequest,
	ContractError,
	OPERATION_KEYS,
	OPERATIONS,
	type OperationInput,
	type OperationKey,
} from 'convo-contract';

const UUID = '3b0c3f0e-8c1a-4f6e-9d2b-6a1f0c9e7d21';
const OTHER_UUID = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';

type Location = 'params' | 'query' | 'body';

interface Case {
	valid: OperationInput;
	/** The method and path the valid input must produce. */
	wire: { method: string; path: string };
	/** Required fields as SPEC section 4 lists them: where they live and their dotted name. */
	required: Array<[Location, string]>;
}

// Written from SPEC.md section 4, not from the schemas, so a schema that drifts from the spec fails here.
const cases: Record<OperationKey, Case> = {
	getMessageStatus: {
		valid: { params: { uuid: 'msg-123' } },
		wire: { method: 'GET', path: '/messages/status/msg-123' },
		required: [['params', 'uuid']],
	},
	sendMessage: {
		valid: {
			body: { to: '+4915112345678', from: 'whatsapp', type: 'text', content: { text: 'Hello' }, channel_uuid: UUID },
		},
		wire: { method: 'POST', path: '/messages/send' },
		required: [
			['body', 'to'],
			['body', 'from'],
			['body', 'type'],
			['body', 'content'],
			['body', 'channel_uuid'],
		],
	},
	upsertSearchItem: {
		valid: { body: { collection_id: UUID, external_id: 'sku-1', item: { title: 'Red shoe' } } },
		wire: { method: 'POST', path: '/search/item' },
		required: [
			['body', 'collection_id'],
			['body', 'external_id'],
			['body', 'item'],
		],
	},
	listSearchItems: {
		valid: { query: { collection_id: UUID } },
		wire: { method: 'GET', path: '/search/items' },
		required: [['query', 'collection_id']],
	},
	updateContact: {
		valid: { params: { uuid: UUID }, body: { tags: ['vip'] } },
		wire: { method: 'PATCH', path: `/contacts/${UUID}` },
		required: [['params', 'uuid']],
	},
	getContactMessages: {
		valid: { params: { uuid: UUID } },
		wire: { method: 'GET', path: `/contacts/${UUID}/messages` },
		required: [['params', 'uuid']],
	},
	closeContactConversations: {
		valid: { params: { uuid: UUID } },
		wire: { method: 'POST', path: `/contacts/${UUID}/conversation/close` },
		required: [['params', 'uuid']],
	},
	openContactConversations: {
		valid: { params: { uuid: UUID } },
		wire: { method: 'POST', path: `/contacts/${UUID}/conversation/open` },
		required: [['params', 'uuid']],
	},
	getConversation: {
		valid: { query: { phone: '4915112345678' } },
		wire: { method: 'GET', path: '/conversations' },
		// No single field is required; the lookup rules are tested in limits.test.ts.
		required: [],
	},
	sendTemplate: {
		valid: {
			query: { template_id: UUID, from_phone_number: '4930123456' },
			body: { phone: '4915112345678', '1': 'Ann' },
		},
		wire: { method: 'POST', path: '/send-template' },
		required: [
			['query', 'template_id'],
			['query', 'from_phone_number'],
			['body', 'phone'],
		],
	},
	createAgent: {
		valid: { body: { agent: { name: 'Support', system_prompt: 'Be helpful.' } } },
		wire: { method: 'POST', path: '/agents' },
		required: [
			['body', 'agent'],
			['body', 'agent.name'],
			['body', 'agent.system_prompt'],
		],
	},
	getAgent: {
		valid: { params: { agent_id: UUID } },
		wire: { method: 'GET', path: `/agents/${UUID}` },
		required: [['params', 'agent_id']],
	},
	updateAgent: {
		valid: { params: { agent_id: UUID }, body: { agent: { prompt_config: { tone_prompt: 'Friendly' } } } },
		wire: { method: 'PATCH', path: `/agents/${UUID}` },
		required: [
			['params', 'agent_id'],
			['body', 'agent'],
		],
	},
	updateAgentPut: {
		valid: { params: { agent_id: UUID }, body: { agent: { tools: { handoff_to_human_control: { enabled: true } } } } },
		wire: { method: 'PUT', path: `/agents/${UUID}` },
		required: [
			['params', 'agent_id'],
			['body', 'agent'],
		],
	},
};

function without(input: OperationInput, location: Location, dotted: string): OperationInput {
	const copy = structuredClone(input) as Record<Location, Record<string, unknown> | undefined>;
	const keys = dotted.split('.');
	let target = copy[location] as Record<string, unknown>;
	for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
	delete target[keys[keys.length - 1]];
	return copy as OperationInput;
}

function contractError(run: () => unknown): ContractError {
	try {
		run();
	} catch (error) {
		if (error instanceof ContractError) return error;
		throw error;
	}
	throw new Error('expected a ContractError, but the input was accepted');
}

test('every operation of SPEC section 4 (A1, A2, B1-B11 and PUT for B11) is declared and has a case here', () => {
	expect(OPERATION_KEYS.map((key) => OPERATIONS[key].spec).sort()).toEqual(
		['A1', 'A2', 'B1', 'B2', 'B3', 'B4', 'B5', 'B6', 'B7', 'B8', 'B9', 'B10', 'B11', 'B11'].sort(),
	);
	expect(Object.keys(cases).sort()).toEqual([...OPERATION_KEYS].sort());
});

describe.each(OPERATION_KEYS)('%s', (key) => {
	const operation = OPERATIONS[key];
	const { valid, wire, required } = cases[key];

	test('accepts a valid request and builds its method and path', () => {
		const request = buildRequest(operation, valid);
		expect(request.method).toBe(wire.method);
		expect(request.path).toBe(wire.path);
	});

	if (required.length > 0) {
		test.each(required)('rejects a request without %s %s, naming the field', (location, field) => {
			const error = contractError(() => buildRequest(operation, without(valid, location, field)));
			expect(error.issues).toContainEqual(expect.objectContaining({ field, message: `${field} is required` }));
			expect(error.message).toContain(`${field} is required`);
		});
	}
});

describe('request building', () => {
	test('path parameters are encoded', () => {
		expect(buildRequest(OPERATIONS.getMessageStatus, { params: { uuid: 'a/b c' } }).path).toBe(
			'/messages/status/a%2Fb%20c',
		);
	});

	test('query keeps only what was given; integer strings arriving from the wire are read as numbers', () => {
		const request = buildRequest(OPERATIONS.getConversation, {
			query: { phone: '4915112345678', message_limit: '20', field_key: undefined },
		});
		expect(request.query).toEqual({ phone: '4915112345678', message_limit: 20 });
	});

	test('every broken rule of a request is reported at once', () => {
		const error = contractError(() =>
			buildRequest(OPERATIONS.sendTemplate, { query: { template_id: 'x' }, body: { phone: '+49 151' } }),
		);
		expect(error.issues.map((issue) => issue.field).sort()).toEqual(['from_phone_number', 'phone', 'template_id']);
	});

	test('a wrong type names the field and what it must be', () => {
		const error = contractError(() =>
			buildRequest(OPERATIONS.updateContact, { params: { uuid: UUID }, body: { tags: 'vip' } }),
		);
		expect(error.message).toBe('tags must be an array, not a string');
	});

	test('B3: assigning and unassigning a user in one request is refused', () => {
		const error = contractError(() =>
			buildRequest(OPERATIONS.updateContact, {
				params: { uuid: UUID },
				body: { assigned_user: 'ann@example.com', unassign_user: true },
			}),
		);
		expect(error.issues[0]).toMatchObject({ field: 'unassign_user' });
	});

	test('B8: template variables by number and by name pass; a URL as a body variable is refused', () => {
		const query = { template_id: UUID, from_phone_number: '4930123456' };
		const ok = buildRequest(OPERATIONS.sendTemplate, {
			query,
			body: {
				phone: '4915112345678',
				'1': 'Ann',
				order_id: 42,
				buttons: [{ index: 0, sub_type: 'url', text: 'A-17' }],
			},
		});
		expect(ok.body).toEqual({
			phone: '4915112345678',
			'1': 'Ann',
			order_id: 42,
			buttons: [{ index: 0, sub_type: 'url', text: 'A-17' }],
		});
		const error = contractError(() =>
			buildRequest(OPERATIONS.sendTemplate, {
				query,
				body: { phone: '4915112345678', '2': 'https://shop.example/o/1' },
			}),
		);
		expect(error.issues[0].field).toBe('2');
		expect(error.message).toContain('send a dynamic URL button value in buttons');
	});

	test('B8: a button must be a url button with a position and a text', () => {
		const error = contractError(() =>
			buildRequest(OPERATIONS.sendTemplate, {
				query: { template_id: UUID, from_phone_number: '4930123456' },
				body: { phone: '4915112345678', buttons: [{ index: -1, sub_type: 'quick_reply', text: '' }] },
			}),
		);
		expect(error.issues.map((issue) => issue.field).sort()).toEqual([
			'buttons[0].index',
			'buttons[0].sub_type',
			'buttons[0].text',
		]);
	});

	test('A2: media messages need an http(s) url in content; captions only where WhatsApp allows them', () => {
		const base = { to: '+4915112345678', from: 'whatsapp', channel_uuid: UUID };
		expect(
			buildRequest(OPERATIONS.sendMessage, {
				body: { ...base, type: 'image', content: { url: 'https://cdn.example/a.png', caption: 'Look' } },
			}).body,
		).toMatchObject({ type: 'image' });
		expect(
			contractError(() =>
				buildRequest(OPERATIONS.sendMessage, { body: { ...base, type: 'video', content: { text: 'x' } } }),
			).issues[0].field,
		).toBe('content.url');
		expect(
			contractError(() =>
				buildRequest(OPERATIONS.sendMessage, {
					body: { ...base, type: 'audio', content: { url: 'https://cdn.example/a.ogg', caption: 'x' } },
				}),
			).message,
		).toBe('content.caption is not allowed for audio messages (only image, video, document)');
	});

	test('A2: a text message needs text unless it is a template message', () => {
		const base = { to: '+4915112345678', from: 'whatsapp', type: 'text', channel_uuid: UUID };
		expect(
			contractError(() => buildRequest(OPERATIONS.sendMessage, { body: { ...base, content: { text: ' ' } } })).message,
		).toBe('content.text must not be empty');
		expect(
			buildRequest(OPERATIONS.sendMessage, {
				body: { ...base, content: { text: '' }, template_uuid: 'tpl-1', template_values: ['Ann'] },
			}).body,
		).toMatchObject({ template_uuid: 'tpl-1' });
	});

	test('A2: fields takes only contact and conversation', () => {
		const base = { to: '+4915112345678', from: 'whatsapp', type: 'text', content: { text: 'x' }, channel_uuid: UUID };
		expect(
			buildRequest(OPERATIONS.sendMessage, { body: { ...base, fields: 'contact,conversation' } }).body,
		).toMatchObject({
			fields: 'contact,conversation',
		});
		expect(
			contractError(() => buildRequest(OPERATIONS.sendMessage, { body: { ...base, fields: 'contact,agent' } }))
				.issues[0].field,
		).toBe('fields');
	});

	test('B9: business_id is never sent (the business comes from the key)', () => {
		const request = buildRequest(OPERATIONS.createAgent, {
			body: { agent: { name: 'A', system_prompt: 'P' }, business_id: OTHER_UUID },
		});
		expect(request.body).toEqual({ agent: { name: 'A', system_prompt: 'P' } });
	});

	test('B11: null values are allowed (the service drops them)', () => {
		const request = buildRequest(OPERATIONS.updateAgent, {
			params: { agent_id: UUID },
			body: { agent: { tools: null, activation_rules: { keywords: ['help'] } } },
		});
		expect(request.body).toEqual({ agent: { tools: null, activation_rules: { keywords: ['help'] } } });
	});
});
