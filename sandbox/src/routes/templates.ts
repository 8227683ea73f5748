/**
 * Template sends (SPEC B8): template, sending number and agent must belong to the business (403);
 * declared variables by numeric or named keys, other body fields ignored; URL button
 * placeholders replaced by the button text; a blocked send (a paused template or number, the
 * business's messaging limit: sendRefusals.ts) refused with 400.
 */
import type { FastifyInstance } from 'fastify';

import type { SandboxContext } from '../context';
import { badRequest, forbidden } from '../httpError';
import { renderTemplate, declaredVariableValues } from '../templates';
import { defineOperation } from './operation';
import { ownedByBusiness } from './ownership';

export function templateRoutes(app: FastifyInstance, context: SandboxContext): void {
	const { store } = context;

	defineOperation(app, context, 'sendTemplate', (business, { query, body }, request) => {
		const template = ownedByBusiness(
			business,
			store.templates.get(query.template_id),
			'template',
			'template_id',
			query.template_id,
		);
		if (!business.phoneNumbers.includes(query.from_phone_number)) {
			throw forbidden(
				`from_phone_number ${query.from_phone_number} is not a phone number of this business`,
				'from_phone_number',
			);
		}
		const agent =
			query.agent_id === undefined
				? undefined
				: ownedByBusiness(business, store.agents.get(query.agent_id), 'agent', 'agent_id', query.agent_id);
		const values = declaredVariableValues(template, body as Record<string, unknown>, (name) => name);
		const sent = body.buttons ?? [];
		sent.forEach((button, position) => {
			if (!template.buttons.some((declared) => declared.index === button.index)) {
				throw badRequest(
					`buttons[${position}].index ${button.index} is not a URL button of template ${template.name}`,
					`buttons[${position}].index`,
				);
			}
		});
		const buttons = template.buttons.map((declared) => {
			const given = sent.find((button) => button.index === declared.index);
			if (!given && declared.url.includes('{{1}}')) {
				throw badRequest(
					`buttons needs an entry with index ${declared.index}: template ${template.name} has a dynamic URL button`,
					'buttons',
				);
			}
			return { index: declared.index, url: given ? declared.url.replace('{{1}}', given.text) : declared.url };
		});
		context.refusals.admit({ businessId: business.id, template, from: query.from_phone_number, phone: body.phone });
		const contact = store.contactByDigits(business, body.phone) ?? store.createContact(business, body.phone);
		const message = store.addMessage({
			business,
			contact,
			direction: 'outbound',
			origin: 'template',
			from: query.from_phone_number,
			to: body.phone,
			text: renderTemplate(template, values),
			template: { id: template.id, name: template.name, variables: values, buttons },
			request: { query: { ...query }, body: { ...body }, receivedAtMs: request.receivedAtMs },
		});
		context.delivery.assign(message);
		// The conversation the message went to.
		if (agent) store.currentConversation(contact).agentId = agent.id;
		return { success: true, message_id: message.uuid, recipient: body.phone, template_name: template.name };
	});
}
