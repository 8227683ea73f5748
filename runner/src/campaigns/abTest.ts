/**
 * An A/B test of templates (docs/guide/ab-tests.md): one campaign, one snapshot, one ledger. Each
 * accepted recipient's variant is drawn once at create (variantSplit.ts) and kept in its snapshot
 * row: 1 to k, the variant it is sent in the test; 0, the remainder that gets the winner. While the
 * test runs (phase `testing`, or `waiting` for the operator after a tie), the claim leaves the
 * remainder pending (lua/includes/jobClaim.lua), so the campaign cannot complete; once decided
 * (lua/decideVariant-2.lua, once whatever the processes), the feeder walks the ledger again and
 * the remainder goes out with the winner's template, under every audience rule as any recipient.
 *
 * The decision (decideIfDue, from the feeder's tick): after `decide_after`, or earlier once every
 * test recipient is final and its delivery settled, each variant's rate (pick_by over the sends
 * the service accepted) is read from the ledger, the tracking records and the replies of its test
 * recipients, and the stated rule (variantChoice.ts) picks the winner; a tie sends the first
 * variant or waits for `campaign choose`, as `if_tie` says.
 */
import type { RunnerContext } from '../context';
import { NotFoundError, UserError } from '../errors';
import { campaignNumber } from '../keyGroups';
import { redisScript } from '../redisScripts';
import { chooseVariant, PICK_BY, ruleText, twoProportionZ, type PickBy, type VariantResult } from './variantChoice';
import { decodeRecipient, type AbTestSettings, type Variant } from './schema';
import { trackingMode } from '../tracking/tracking';
import { isoOrNull } from '../isoTime';

export type AbPhase = 'testing' | 'waiting' | 'decided';

/** An A/B test as its campaign's hash holds it. */
export interface AbTestRecord extends AbTestSettings {
	phase: AbPhase;
	/** Accepted recipients per draw at create: [0] the remainder, [v] variant v's test share. */
	counts: number[];
	/** When the feeder first saw it running: decide_after counts from then. */
	startedAt?: number;
	/** 1-based, once decided. */
	winner?: number;
	chosenBy?: 'rule' | 'first' | 'operator';
	decidedAt?: number;
	/** The figures the decision (or the tie that waits) was made on. */
	figures?: AbFigures;
}

/** One variant's funnel over its test recipients. */
export interface VariantFunnel {
	variant: number;
	template_id: string;
	recipients: number;
	sent: number;
	delivered: number;
	read: number;
	replied: number;
	failed: number;
	/** pick_by over sent. */
	rate: number;
	/** The leader's z against this variant (absent for the leader). */
	z?: number;
}

/** What a decision is made on, as the status, the event and the report show it. */
export interface AbFigures {
	pick_by: PickBy;
	rule: string;
	critical_z: number;
	minimum: number;
	verdict: 'winner' | 'tie';
	/** A tie's reason. */
	why?: string;
	/** 1-based: the rule's winner, or the leader of a tie. */
	leader: number;
	variants: VariantFunnel[];
	/** Every test recipient is final and its delivery settled (decided before `decide_after` when so). */
	settled: boolean;
}

/** The hash fields of a new A/B test (create.ts). */
export function abTestFields(test: AbTestSettings, counts: number[]): Record<string, string | number> {
	return {
		ab_variants: JSON.stringify(test.variants),
		ab_seed: test.seed,
		ab_share: test.share,
		ab_pick_by: test.pickBy,
		ab_decide_after: test.decideAfterMs,
		ab_if_tie: test.ifTie,
		ab_minimum: test.minimum,
		// Accepted rows per draw, [remainder, variant 1, …]: a draft's chunks add to them (lua/applyChunk-6.lua).
		...Object.fromEntries(counts.map((count, draw) => [`ab_n${draw}`, count])),
		ab_phase: 'testing',
	};
}

/** The campaign's A/B test from its hash, or undefined for a campaign without one. */
export function abTestOf(hash: Record<string, string>): AbTestRecord | undefined {
	if (!hash.ab_phase) return undefined;
	const variants = JSON.parse(hash.ab_variants ?? '[]') as Variant[];
	return {
		variants,
		seed: hash.ab_seed ?? '',
		share: Number(hash.ab_share),
		pickBy: (PICK_BY as readonly string[]).includes(hash.ab_pick_by) ? (hash.ab_pick_by as PickBy) : 'read',
		decideAfterMs: Number(hash.ab_decide_after),
		ifTie: hash.ab_if_tie === 'wait' ? 'wait' : 'first',
		minimum: Number(hash.ab_minimum),
		phase: hash.ab_phase as AbPhase,
		counts: Array.from({ length: variants.length + 1 }, (_, draw) => Number(hash[`ab_n${draw}`] ?? 0)),
		startedAt: hash.ab_started_at ? Number(hash.ab_started_at) : undefined,
		winner: hash.ab_winner ? Number(hash.ab_winner) : undefined,
		chosenBy: (hash.ab_chosen_by as AbTestRecord['chosenBy']) || undefined,
		decidedAt: hash.ab_decided_at ? Number(hash.ab_decided_at) : undefined,
		figures: hash.ab_figures ? (JSON.parse(hash.ab_figures) as AbFigures) : undefined,
	};
}

/**
 * When the test decides at the latest: `decide_after` from when it started sending (the feeder's
 * first tick that saw it running; before that, from now or its `--at`).
 */
function decideDueAt(campaign: { startAt?: number }, test: AbTestRecord): number {
	return (test.startedAt ?? Math.max(Date.now(), campaign.startAt ?? 0)) + test.decideAfterMs;
}

const WALK = 1000;

/**
 * Each variant's funnel over its test recipients, read from the snapshot (the variant), the ledger
 * (sent, failed), the tracking records (delivered, read) and the replies, a chunk at a time; and
 * whether every test recipient is final and its delivery tracking done.
 */
async function variantFunnels(
	context: RunnerContext,
	campaign: { id: string; from: string; total: number },
	test: AbTestSettings,
): Promise<{ variants: VariantFunnel[]; settled: boolean }> {
	const { redis, keys } = context;
	const { id, from } = campaign;
	const variants: VariantFunnel[] = test.variants.map((variant, i) => ({
		variant: i + 1,
		template_id: variant.templateId,
		recipients: 0,
		sent: 0,
		delivered: 0,
		read: 0,
		replied: 0,
		failed: 0,
		rate: 0,
	}));
	let settled = true;
	for (let first = 0; first < campaign.total; first += WALK) {
		const fields = Array.from({ length: Math.min(WALK, campaign.total - first) }, (_, i) => String(first + i));
		const [rows, records, tracked, replies] = await Promise.all([
			redis.hmget(keys.recipients(from, id), ...fields),
			context.ledger.read(id, first, fields.length),
			redis.hmget(keys.tracked(from, id), ...fields),
			redis.hmget(keys.replies(from, id), ...fields),
		]);
		rows.forEach((row, i) => {
			const variant = row ? decodeRecipient(row).variant : undefined;
			const record = records[i];
			if (!variant || !record) return;
			const funnel = variants[variant - 1];
			if (!funnel) return;
			funnel.recipients++;
			if (record.outcome === 'pending' || record.outcome === 'claimed') settled = false;
			if (record.outcome === 'failed') funnel.failed++;
			if (record.outcome !== 'sent') return;
			funnel.sent++;
			const track = tracked[i] ? (JSON.parse(tracked[i]) as { s: string; o?: number }) : undefined;
			if (!track || track.o === 1) settled = false;
			if (track?.s === 'd' || track?.s === 'r') funnel.delivered++;
			if (track?.s === 'r') funnel.read++;
			if (track?.s === 'f') funnel.failed++;
			if (replies[i]) funnel.replied++;
		});
	}
	for (const funnel of variants) funnel.rate = funnel.sent > 0 ? hitsOf(funnel, test.pickBy) / funnel.sent : 0;
	return { variants, settled };
}

const hitsOf = (funnel: VariantFunnel, pickBy: PickBy) => funnel[pickBy];

/** The rule's verdict on the funnels, as figures. */
function figuresOf(test: AbTestSettings, variants: VariantFunnel[], settled: boolean): AbFigures {
	const results: VariantResult[] = variants.map((funnel) => ({ sent: funnel.sent, hits: hitsOf(funnel, test.pickBy) }));
	const verdict = chooseVariant(results, test.pickBy, test.minimum);
	const leader = verdict.kind === 'winner' ? verdict.variant : 0;
	return {
		pick_by: test.pickBy,
		rule: verdict.rule,
		critical_z: verdict.criticalZ,
		minimum: test.minimum,
		verdict: verdict.kind,
		...(verdict.kind === 'tie' ? { why: verdict.why } : {}),
		leader: leader + 1,
		variants: variants.map((funnel, i) => ({
			...funnel,
			rate: Math.round(funnel.rate * 10_000) / 10_000,
			...(i === leader ? {} : { z: Math.round(twoProportionZ(results[leader], results[i]) * 1000) / 1000 }),
		})),
		settled,
	};
}

/** When this process last walked each testing campaign to see whether its test settled early. */
const lookedAt = new Map<string, number>();
/** A test not yet due is walked at most this often (the feeder ticks every second). */
const LOOK_EVERY_MS = 2000;

/**
 * The feeder's part for a campaign under test: decides it when due (decide_after passed, or every
 * test recipient final and its delivery settled). Returns the phase after.
 */
export async function decideIfDue(
	context: RunnerContext,
	campaign: { id: string; from: string; total: number; startAt?: number; createdAt: number },
	test: AbTestRecord,
): Promise<AbPhase> {
	if (test.phase !== 'testing') return test.phase;
	const now = Date.now();
	if (test.startedAt === undefined) {
		// The first tick that sees it running starts its clock, once whichever process.
		const hash = context.keys.campaign(campaign.from, campaign.id);
		await context.redis.hsetnx(hash, 'ab_started_at', now);
		test = { ...test, startedAt: Number(await context.redis.hget(hash, 'ab_started_at')) };
	}
	const due = now >= decideDueAt(campaign, test);
	if (!due && now - (lookedAt.get(campaign.id) ?? 0) < LOOK_EVERY_MS) return 'testing';
	lookedAt.set(campaign.id, now);
	const { variants, settled } = await variantFunnels(context, campaign, test);
	// Tracking off: nothing settles delivery, so the test runs its whole time.
	if (!due && !(settled && trackingMode(context.config) !== 'off')) return 'testing';
	const figures = figuresOf(test, variants, settled);
	const winner = figures.verdict === 'winner' ? figures.leader : test.ifTie === 'first' ? 1 : undefined;
	const chosenBy = figures.verdict === 'winner' ? 'rule' : 'first';
	const phase = await recordDecision(context, campaign, winner, figures, chosenBy);
	lookedAt.delete(campaign.id);
	if (phase === 'decided')
		context.log.info(
			{ campaign: campaign.id, variant: winner, by: chosenBy, verdict: figures.verdict },
			'A/B test decided: the remainder gets the winner',
		);
	else if (phase === 'waiting')
		context.log.info({ campaign: campaign.id, why: figures.why }, "A/B test tied: waiting for the operator's choice");
	// 'taken': another process (or the operator) decided first.
	return phase === 'waiting' ? 'waiting' : 'decided';
}

async function recordDecision(
	context: RunnerContext,
	campaign: { id: string; from: string },
	winner: number | undefined,
	figures: AbFigures,
	chosenBy: string,
): Promise<string> {
	const { keys } = context;
	const decide = redisScript(context.redis, 'decideVariant');
	const phase = (await decide(
		[keys.campaign(campaign.from, campaign.id), keys.outbox(campaign.from)],
		[campaign.id, Date.now(), winner ?? '', JSON.stringify(figures), chosenBy],
	)) as string;
	if (phase === 'decided') {
		// A windowed campaign's zones feed their lists again, the remainder now included.
		await context.redis.del(keys.zoneFeed(campaign.from, campaign.id));
	}
	return phase;
}

/**
 * The operator's choice (`campaign choose`): before the rule decides, or after a tie that waits.
 * `variant`: its number (1 to k) or its template id.
 */
export async function chooseCampaignVariant(
	context: RunnerContext,
	id: string,
	variant: string | number,
): Promise<{ id: string; variant: number; template_id: string }> {
	const from = await campaignNumber(context, id);
	if (from === undefined) throw new NotFoundError(`No campaign with id ${id}`);
	const hash = await context.redis.hgetall(context.keys.campaign(from, id));
	const test = abTestOf(hash);
	if (!test) throw new UserError(`campaign ${id} is not an A/B test: it has no variant to choose`);
	const text = String(variant).trim();
	const byNumber = /^\d+$/.test(text) ? Number(text) : undefined;
	const index =
		byNumber !== undefined && byNumber >= 1 && byNumber <= test.variants.length
			? byNumber
			: test.variants.findIndex((candidate) => candidate.templateId === text) + 1;
	if (index === 0)
		throw new UserError(
			`--variant must be a variant's number (1 to ${test.variants.length}) or its template id ` +
				`(${test.variants.map((candidate) => candidate.templateId).join(', ')})`,
		);
	if (test.phase === 'decided')
		throw new UserError(
			`campaign ${id}'s A/B test is decided already (variant ${test.winner}, by ${test.chosenBy}): ` +
				'its remainder is being sent with that template',
		);
	const { variants, settled } = await variantFunnels(context, { id, from, total: Number(hash.total) }, test);
	const phase = await recordDecision(context, { id, from }, index, figuresOf(test, variants, settled), 'operator');
	if (phase !== 'decided') throw new UserError(`campaign ${id}'s A/B test was decided meanwhile; nothing changed`);
	context.log.info({ campaign: id, variant: index }, "A/B test decided by the operator's choice");
	return { id, variant: index, template_id: test.variants[index - 1].templateId };
}

/** The test as its hash holds it, without a walk of its recipients: what an event carries. */
export function abTestSummary(test: AbTestRecord) {
	return {
		phase: test.phase,
		variants: test.variants.map((variant, i) => ({
			variant: i + 1,
			template_id: variant.templateId,
			variables: variant.variables,
		})),
		test_share: test.share,
		seed: test.seed,
		pick_by: test.pickBy,
		if_tie: test.ifTie,
		split: { test: test.counts.slice(1), remainder: test.counts[0] ?? 0 },
		winner: test.winner ?? null,
		chosen_by: test.chosenBy ?? null,
		decided_at: isoOrNull(test.decidedAt),
		decided_on: test.figures ?? null,
	};
}

/**
 * A status polled (the console every few seconds) walks a test's recipients at most this often per
 * process, and again once its phase changed: a walk from before the decision would show a tie or a
 * winner beside figures older than the ones it was decided on.
 */
const VIEW_CACHE_MS = 2000;
const viewed = new Map<string, { at: number; phase: AbPhase; funnels: Awaited<ReturnType<typeof variantFunnels>> }>();

/** The test as the status shows it: its settings, phase, split, and each variant's funnel with the rule's figures. */
export async function abTestView(
	context: RunnerContext,
	campaign: { id: string; from: string; total: number; startAt?: number; createdAt: number },
	test: AbTestRecord,
) {
	const now = Date.now();
	let cached = viewed.get(campaign.id);
	if (!cached || cached.phase !== test.phase || now - cached.at >= VIEW_CACHE_MS) {
		cached = { at: now, phase: test.phase, funnels: await variantFunnels(context, campaign, test) };
		for (const [id, entry] of viewed) if (now - entry.at >= VIEW_CACHE_MS) viewed.delete(id);
		viewed.set(campaign.id, cached);
	}
	const { variants, settled } = cached.funnels;
	const figures = figuresOf(test, variants, settled);
	return {
		phase: test.phase,
		...(test.phase === 'waiting' ? { note: "waiting for the operator's choice (campaign choose)" } : {}),
		variants: test.variants.map((variant, i) => ({
			variant: i + 1,
			template_id: variant.templateId,
			variables: variant.variables,
		})),
		test_share: test.share,
		seed: test.seed,
		pick_by: test.pickBy,
		if_tie: test.ifTie,
		decide_at: new Date(decideDueAt(campaign, test)).toISOString(),
		split: { test: test.counts.slice(1), remainder: test.counts[0] ?? 0 },
		rule: ruleText(test.pickBy, test.minimum, test.variants.length),
		figures,
		...(test.winner
			? {
					winner: test.winner,
					chosen_by: test.chosenBy,
					decided_at: isoOrNull(test.decidedAt),
					decided_on: test.figures,
				}
			: {}),
	};
}
