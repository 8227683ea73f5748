/**
 * Reconcile (campaigns/reconcile.ts) against the sandbox: an unknown recipient is proven sent only
 * by a message from its campaign's own number. Another number's message to the same phone since
 * the attempt (a campaign beside it, to an overlapping audience) proves nothing: the recipient is
 * not sent, and `campaign retry --not-sent` sends it. B7 does not say which number sent a message;
 * B4 does, counted here in the sandbox's own records.
 */
import { reconcileCampaign } from '../../runner/src/core/campaigns';
import { inlineCampaign, positionalTemplate, useRunnerUnderTest } from './support';

jest.setTimeout(60_000);

const runner = useRunnerUnderTest();

/** A campaign of one recipient whose claim was lost (a second attempt found it claimed): unknown. */
async function unknownRecipient(prefix: string): Promise<{ id: string; phone: string }> {
	const id = await inlineCampaign(runner, 1, prefix);
	const { ledger } = runner.context;
	await ledger.claim(id, 0, 'attempt-that-died');
	await ledger.claim(id, 0, 'a-later-attempt');
	const [record] = await ledger.read(id, 0, 1);
	expect(record?.outcome).toBe('unknown');
	return { id, phone: `${prefix}00000` };
}

/** A template message to `phone` from the business's number `from`, through the service as a campaign sends. */
async function sendFrom(from: string, phone: string): Promise<string> {
	const service = runner.context.service!;
	const send = service.templateSender({ template_id: positionalTemplate(runner.business).id, from_phone_number: from });
	const outcome = await send({ phone, 1: 'x', 2: 'y' });
	if (outcome.kind !== 'ok' || !outcome.messageId) throw new Error(`the sandbox refused the send: ${outcome.kind}`);
	return outcome.messageId;
}

test("another number's message to the phone since the attempt proves nothing: not sent", async () => {
	const [own, other] = runner.business.phoneNumbers;
	const { id, phone } = await unknownRecipient('4915299');
	await sendFrom(other, phone);
	expect(await reconcileCampaign(runner.context, id)).toMatchObject({ checked: 1, sent: 0, not_sent: 1 });
	const [record] = await runner.context.ledger.read(id, 0, 1);
	expect(record).toMatchObject({ outcome: 'not_sent' });
	expect(own).not.toBe(other);
});

test("the campaign's own number's message proves the send: sent, with that message's id", async () => {
	const [own, other] = runner.business.phoneNumbers;
	const { id, phone } = await unknownRecipient('4915298');
	await sendFrom(other, phone);
	const messageId = await sendFrom(own, phone);
	expect(await reconcileCampaign(runner.context, id)).toMatchObject({ checked: 1, sent: 1, not_sent: 0 });
	const [record] = await runner.context.ledger.read(id, 0, 1);
	expect(record).toMatchObject({ outcome: 'sent', ref: messageId });
});
