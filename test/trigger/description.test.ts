import type { INodePropertyOptions } from 'n8n-workflow';

import { ConvoTrigger } from '../../packages/n8n-nodes-convo/nodes/ConvoTrigger/ConvoTrigger.node';

const { description } = new ConvoTrigger();

describe('Convo Trigger description', () => {
	it('offers "Trigger On" with an action per event, so the node creator lists real trigger events', () => {
		// n8n's node creator reads trigger events from the property labelled Event, Events or Trigger On.
		const triggerOn = description.properties.filter((property) =>
			['event', 'events', 'trigger on'].includes(property.displayName.toLowerCase()),
		);
		expect(triggerOn).toHaveLength(1);
		expect(triggerOn[0].type).toBe('options');
		expect(triggerOn[0].default).toBe('received');
		const options = triggerOn[0].options as INodePropertyOptions[];
		expect(options.map((option) => [option.name, option.value, option.action])).toEqual([
			['Message Received', 'received', 'On message received'],
			['Message Sent', 'sent', 'On message sent'],
			['Any Message', 'any', 'On any message'],
		]);
		expect(description.properties.find((property) => property.name === 'status')).toBeUndefined();
	});

	it('gives the registration as numbered steps that say publish and how to test in the editor', () => {
		const notice = description.properties.find((property) => property.type === 'notice');
		const steps = notice?.displayName ?? '';
		for (const step of ['1. ', '2. ', '3. ', '4. ']) expect(steps).toContain(step);
		expect(steps).toMatch(/published/);
		expect(steps).not.toMatch(/activate/i);
		expect(steps).toContain('Test URL');
		expect(steps).toContain('Test this trigger');
		expect(steps).toContain('message_created');
	});
});
