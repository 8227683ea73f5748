import { z } from 'zod/v4';

import { jsonObject, nonEmptyString, uuid } from './common';

/** The agent fields the service merges key by key on update (SPEC B11). */
export const AGENT_MERGED_FIELDS = [
	'prompt_config',
	'tools',
	'data',
	'activation_rules',
	'follow_up_settings',
	'inactivity_run_settings',
] as const;

const agentToolsSchema = z.looseObject({
	handoff_to_human_control: z
		.looseObject({ enabled: z.boolean().optional(), instructions: z.string().optional() })
		.optional(),
});

export const createAgentBody = z.object({
	agent: z.object({
		name: nonEmptyString(),
		system_prompt: nonEmptyString(),
		tools: agentToolsSchema.optional(),
	}),
});

/** Null values are dropped by the service before validation (SPEC B11), so they are allowed here. */
const mergedObject = () => jsonObject().nullable().optional();
const mergedFields = Object.fromEntries(AGENT_MERGED_FIELDS.map((field) => [field, mergedObject()])) as Record<
	(typeof AGENT_MERGED_FIELDS)[number],
	ReturnType<typeof mergedObject>
>;

export const updateAgentBody = z.object({
	agent: z.object({
		name: nonEmptyString().nullable().optional(),
		system_prompt: nonEmptyString().nullable().optional(),
		...mergedFields,
	}),
});

export const agentParams = z.object({ agent_id: uuid() });

const agentSchema = z.looseObject({
	id: nonEmptyString(),
	name: z.string(),
	type: z.string(),
	system_prompt: z.string(),
	tools: z.record(z.string(), z.unknown()).optional(),
	prompt_config: z.record(z.string(), z.unknown()).optional(),
});

export const agentEnvelope = z.looseObject({ agent: agentSchema, business_id: z.string() });
