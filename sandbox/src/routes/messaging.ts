/** Messaging API (SPEC A1, A2) under /v1, bearer authentication. */
import type { FastifyInstance } from 'fastify';

import { LIMITS, toApiDigits } from 'convo-contract';
import type { SandboxContext } from '../context';
import { emitMessageCreated } from '../events';
import { badRequest, forbidden, notFound } from '../httpError';
import type { Template } from '../model';
import { renderTemplate, declaredVariableValues } from '../templates';
import { messageStatusView } from '../views';
import { defineOperation } from './operation';
import { ownedByBusiness } from './ownership';

export function messagingRoutes(app: FastifyInstance, context: SandboxContext): void {
	const { store, clock } = context;

	defineOperation(app, context, 'getMessageStatus', (business, { params }) => {
		const message = store.messages.get(params.uuid);
		// Another business's message is as unknown as a missing one: no data crosses businesses.
		if (!message || message.businessId !== business.id || message.direction !== 'outbound') {
			throw notFound(`No message with uuid ${params.uuid}`, 'uuid');
		}
		return messageStatusView(message, clock.now());
	});

	defineOperation(app, context, 'sendMessage', (business, { body }) => {
		if (body.channel_uuid !== business.channelUuid) {
			const other = store.businesses.some((candidate) => candidate.channelUuid === body.channel_uuid);
			if (other)
				throw forbidden(`channel_uuid: the channel ${body.channel_uuid} belongs to another business`, 'channel_uuid');
			throw notFound(`channel_uuid: no channel with uuid ${body.channel_uuid}`, 'channel_uuid');
		}
		const digits = toApiDigits(body.to);
		if (!digits) throw badRequest(`to "${body.to}" is not a phone number with country code`, 'to');
		let template: Template | undefined;
		if (body.template_uuid !== undefined) {
			template = ownedByBusiness(
				business,
				store.templates.get(body.template_uuid),
				'template',
				'template_uuid',
				body.template_uuid,
			);
		}
		if (body.assigned_user !== undefined && !business.users.includes(body.assigned_user)) {
			throw badRequest(`assigned_user ${body.assigned_user} is not a user of this business`, 'assigned_user');
		}
		if (body.team_uuid !== undefined && !business.teams.includes(body.team_uuid)) {
			const other = store.businesses.some((candidate) => candidate.teams.includes(body.team_uuid as string));
			if (other) throw forbidden(`team_uuid: the team ${body.team_uuid} belongs to another business`, 'team_uuid');
			throw notFound(`team_uuid: no team with uuid ${body.team_uuid}`, 'team_uuid');
		}
		let contact = store.contactByDigits(business, digits);
		const now = clock.now();
		if (!template) {
			const lastInbound = contact ? store.lastInboundAt(contact) : undefined;
			if (lastInbound === undefined || now - lastInbound > LIMITS.customerCareWindowMs) {
				throw badRequest(
					'template_uuid is required: the contact sent no message in the last 24 hours (customer-care window), ' +
						'so only a template message can be sent',
					'template_uuid',
				);
			}
		}
		let text: string;
		let templateRecord;
		if (template) {
			const declared = template;
			// template_values fill the declared variables in order (their element shape is not shown).
			const source = Object.fromEntries(declared.variables.map((name, index) => [name, body.template_values?.[index]]));
			const values = declaredVariableValues(
				template,
				source,
				(name) => `template_values[${declared.variables.indexOf(name)}]`,
			);
			text = renderTemplate(template, values);
			templateRecord = { id: template.id, name: template.name, variables: values, buttons: [] };
		} else {
			const content = body.content as { text?: string; caption?: string };
			text = body.type === 'text' ? (content.text ?? '') : (content.caption ?? '');
		}
		contact ??= store.createContact(business, digits);
		const message = store.addMessage({
			business,
			contact,
			direction: 'outbound',
			origin: 'api',
			from: business.phoneNumbers[0],
			to: digits,
			type: body.type,
			text,
			content: body.content,
			metadata: body.metadata,
			template: templateRecord,
			request: { query: {}, body: { ...body } },
		});
		if (body.type !== 'text') message.attachments = [{ type: body.type, ...body.content }];
		context.delivery.assign(message);
		// The conversation the message went to.
		const conversation = store.currentConversation(contact);
		if (body.assigned_user !== undefined) conversation.assignedUser = body.assigned_user;
		if (body.team_uuid !== undefined) conversation.teamUuid = body.team_uuid;
		emitMessageCreated(context, message, contact, 'sent');
		return { message: { uuid: message.uuid, status: 'enqueued' } };
	});
}
