import type { IDataObject } from 'n8n-workflow';

import { admin, badCredentials, contactNow, external, fieldLabel, runConvo, shownError, useSandbox } from './support';

const UNKNOWN = '00000000-0000-4000-8000-000000000404';

describe('Convo node: Contact', () => {
	const context = useSandbox();
	const first = () => context.business.contacts[0];

	describe('Update', () => {
		it('replaces the tags, merges custom fields, renames and assigns a user', async () => {
			const contact = first();
			await admin(context.sandbox, 'POST', 'reset');
			const before = await contactNow(context, contact.uuid);
			const keptKeys = Object.keys(before.customFields as object);
			const result = await runConvo(
				context,
				{
					resource: 'contact',
					operation: 'update',
					contactUuid: '={{ $json.uuid }}',
					updateFields: {
						name: 'Ada Lovelace',
						tags: '={{ $json.tags }}',
						customFields: { field: [{ key: 'tier', value: 'gold' }] },
					},
					assignment: 'assign',
					assignedUser: context.business.users[0],
				},
				{ items: [{ uuid: contact.uuid, tags: ['vip', ' newsletter '] }] },
			);
			expect(result.errorOf('Convo')).toBeUndefined();
			// Simplify: the contact itself, not { contact: [ ... ] }.
			expect(result.json[0]).toMatchObject({ uuid: contact.uuid, tags: ['vip', 'newsletter'] });
			const after = await contactNow(context, contact.uuid);
			expect(after.tags).toEqual(['vip', 'newsletter']);
			expect(after.name).toBe('Ada Lovelace');
			expect(after.assignedUser).toBe(context.business.users[0]);
			expect(after.customFields).toMatchObject({ tier: 'gold' });
			for (const key of keptKeys) expect(Object.keys(after.customFields as object)).toContain(key);

			// Tags given again replace, they do not add; unassign removes the user.
			await runConvo(context, {
				resource: 'contact',
				operation: 'update',
				contactUuid: contact.uuid,
				updateFields: { tags: 'support' },
				assignment: 'unassign',
			});
			const last = await contactNow(context, contact.uuid);
			expect(last.tags).toEqual(['support']);
			expect(last.assignedUser).toBeNull();
		});

		describe('Tags', () => {
			const updateTags = (tagsFields: IDataObject, items?: IDataObject[]) =>
				runConvo(
					context,
					{
						resource: 'contact',
						operation: 'update',
						contactUuid: first().uuid,
						updateFields: { name: 'Ada L.', ...tagsFields },
					},
					items ? { items } : {},
				);
			const seed = async (tags: string[]) => {
				await external(context, 'PATCH', `/contacts/${first().uuid}`, { tags });
			};

			it('keeps the tags when Tags is added but empty, as an empty Name is ignored', async () => {
				await seed(['vip', 'newsletter']);
				const result = await updateTags({ tags: '' });
				expect(result.errorOf('Convo')).toBeUndefined();
				const after = await contactNow(context, first().uuid);
				expect(after.tags).toEqual(['vip', 'newsletter']);
				expect(after.name).toBe('Ada L.');

				// Nothing at all to change: the contact comes back as it is.
				const nothing = await runConvo(context, {
					resource: 'contact',
					operation: 'update',
					contactUuid: first().uuid,
					updateFields: { name: '', tags: '' },
				});
				expect(nothing.errorOf('Convo')).toBeUndefined();
				expect(nothing.json[0]).toMatchObject({ uuid: first().uuid, tags: ['vip', 'newsletter'], name: 'Ada L.' });
			});

			it.each([
				['an empty list', []],
				['an empty string', ''],
				['only commas and spaces', ' , ,'],
			])('keeps the tags when an expression resolves to %s, in every mode', async (_, value) => {
				await seed(['vip']);
				for (const tagsMode of ['replace', 'add', 'remove']) {
					const result = await updateTags({ tags: '={{ $json.tags }}', tagsMode }, [{ tags: value }]);
					expect(result.errorOf('Convo')).toBeUndefined();
					expect((await contactNow(context, first().uuid)).tags).toEqual(['vip']);
				}
			});

			it('removes every tag only when Remove All is chosen', async () => {
				await seed(['vip', 'newsletter']);
				const result = await updateTags({ tagsMode: 'removeAll' });
				expect(result.errorOf('Convo')).toBeUndefined();
				expect(result.json[0].tags).toEqual([]);
				expect((await contactNow(context, first().uuid)).tags).toEqual([]);
			});

			it('Add keeps the current tags and adds the new ones once', async () => {
				await seed(['vip', 'newsletter']);
				const result = await updateTags({ tags: 'newsletter, gold', tagsMode: 'add' });
				expect(result.errorOf('Convo')).toBeUndefined();
				expect((await contactNow(context, first().uuid)).tags).toEqual(['vip', 'newsletter', 'gold']);
			});

			it('Remove takes away only the given tags', async () => {
				await seed(['vip', 'newsletter', 'gold']);
				const result = await updateTags({ tags: '={{ $json.drop }}', tagsMode: 'remove' }, [
					{ drop: ['newsletter', 'unknown'] },
				]);
				expect(result.errorOf('Convo')).toBeUndefined();
				expect((await contactNow(context, first().uuid)).tags).toEqual(['vip', 'gold']);
			});

			it('Replace sets exactly the given tags', async () => {
				await seed(['vip']);
				await updateTags({ tags: 'support, gold', tagsMode: 'replace' });
				expect((await contactNow(context, first().uuid)).tags).toEqual(['support', 'gold']);
			});
		});

		it('refuses a custom field given twice, naming the field, and sends nothing', async () => {
			const before = await contactNow(context, first().uuid);
			const result = await runConvo(context, {
				resource: 'contact',
				operation: 'update',
				contactUuid: first().uuid,
				updateFields: {
					customFields: {
						field: [
							{ key: 'tier', value: 'gold' },
							{ key: 'tier', value: 'silver' },
						],
					},
				},
			});
			expect(shownError(result)).toContain('Custom Fields: the key "tier" is given twice');
			expect(await contactNow(context, first().uuid)).toEqual(before);
		});

		it('shows the service message for a user that is not in the business (400)', async () => {
			const result = await runConvo(context, {
				resource: 'contact',
				operation: 'update',
				contactUuid: first().uuid,
				assignment: 'assign',
				assignedUser: 'nobody@example.invalid',
			});
			expect(shownError(result)).toMatch(/^The service refused the request: \S+/);
		});

		it('names the contact that does not exist (404)', async () => {
			const result = await runConvo(context, {
				resource: 'contact',
				operation: 'update',
				contactUuid: UNKNOWN,
				updateFields: { name: 'X' },
			});
			expect(shownError(result)).toContain(
				`No contact with ${fieldLabel('contact', 'update', 'contactUuid')} ${UNKNOWN} (404)`,
			);
		});

		it('says which credential to check (401)', async () => {
			const result = await runConvo(
				context,
				{ resource: 'contact', operation: 'update', contactUuid: first().uuid, updateFields: { name: 'X' } },
				{ credentials: badCredentials(context) },
			);
			expect(shownError(result)).toContain('Check the API key in the Convo External API credential');
		});
	});

	describe('Get Messages', () => {
		it('returns one item per message, newest first, up to the limit', async () => {
			const contact = first();
			for (const text of ['one', 'two', 'three']) {
				await admin(context.sandbox, 'POST', 'inbound', {
					business: context.business.id,
					from: contact.phoneNumber,
					text,
				});
			}
			const result = await runConvo(context, {
				resource: 'contact',
				operation: 'getMessages',
				contactUuid: contact.uuid,
				messageLimit: 2,
			});
			expect(result.errorOf('Convo')).toBeUndefined();
			expect(result.json.map((m) => m.text)).toEqual(['three', 'two']);
			expect(result.output.every((item) => (item.pairedItem as { item: number }).item === 0)).toBe(true);
		});

		it('refuses a limit above 200 before sending (400 rule)', async () => {
			const result = await runConvo(context, {
				resource: 'contact',
				operation: 'getMessages',
				contactUuid: first().uuid,
				messageLimit: 500,
			});
			expect(shownError(result)).toContain(
				`${fieldLabel('contact', 'getMessages', 'messageLimit')} is 500; at most 200`,
			);
		});

		it('names the contact that does not exist (404) and the credential (401)', async () => {
			const missing = await runConvo(context, { resource: 'contact', operation: 'getMessages', contactUuid: UNKNOWN });
			expect(shownError(missing)).toContain(
				`No contact with ${fieldLabel('contact', 'update', 'contactUuid')} ${UNKNOWN}`,
			);
			const refused = await runConvo(
				context,
				{ resource: 'contact', operation: 'getMessages', contactUuid: first().uuid },
				{ credentials: badCredentials(context) },
			);
			expect(shownError(refused)).toContain('Check the API key in the Convo External API credential');
		});
	});

	describe('Close and Reopen Conversations', () => {
		it('sets closedAt on close and clears it on reopen', async () => {
			const contact = first();
			const closed = await runConvo(context, {
				resource: 'contact',
				operation: 'closeConversations',
				contactUuid: contact.uuid,
			});
			expect(closed.errorOf('Convo')).toBeUndefined();
			expect(closed.json[0].closedAt).toEqual(expect.any(String));
			expect((await contactNow(context, contact.uuid)).closedAt).toEqual(expect.any(String));

			const reopened = await runConvo(context, {
				resource: 'contact',
				operation: 'reopenConversations',
				contactUuid: contact.uuid,
				simplify: false,
			});
			expect(reopened.json[0]).toEqual({ contact: [expect.objectContaining({ uuid: contact.uuid, closedAt: null })] });
			expect((await contactNow(context, contact.uuid)).closedAt).toBeNull();
		});

		it.each(['closeConversations', 'reopenConversations'])(
			'%s: 404 names the contact, 401 the credential',
			async (operation) => {
				const missing = await runConvo(context, { resource: 'contact', operation, contactUuid: UNKNOWN });
				expect(shownError(missing)).toContain(
					`No contact with ${fieldLabel('contact', 'update', 'contactUuid')} ${UNKNOWN}`,
				);
				const refused = await runConvo(
					context,
					{ resource: 'contact', operation, contactUuid: first().uuid },
					{ credentials: badCredentials(context) },
				);
				expect(shownError(refused)).toContain('Check the API key in the Convo External API credential');
			},
		);
	});
});
