import { Convo } from '../../packages/n8n-nodes-convo/nodes/Convo/Convo.node';
import * as getAll from '../../packages/n8n-nodes-convo/nodes/Convo/actions/searchItem/getAll.operation';
import { runConvo, useSandbox } from './support';

describe('Convo node versions', () => {
	const context = useSandbox();

	it('is a versioned node type whose default version is 1.1; 1 and 1.1 share one implementation, so a v2 can come without breaking either', () => {
		const convo = new Convo();
		expect(convo.description.defaultVersion).toBe(1.1);
		expect(Object.keys(convo.nodeVersions).sort()).toEqual(['1', '1.1']);
		const v1 = convo.getNodeType(1).description;
		expect(v1.version).toEqual([1, 1.1]);
		expect(v1.name).toBe('convo');
		expect(v1.usableAsTool).toBe(true);
		expect(convo.getNodeType(1.1)).toBe(convo.nodeVersions[1]);
		expect(convo.getNodeType()).toBe(convo.nodeVersions[1.1]);
	});

	it("hands the workflow node's typeVersion to the operation n8n-core runs", async () => {
		// A spy that calls through: it only records what the router passed.
		const execute = jest.spyOn(getAll, 'execute');
		try {
			const result = await runConvo(
				context,
				{ resource: 'searchItem', operation: 'getAll', collectionId: context.business.collections[0].id },
				{ items: [{}, {}], node: { typeVersion: 1 } },
			);
			expect(result.errorOf('Convo')).toBeUndefined();
			expect(execute.mock.calls.map((call) => call.slice(0, 2))).toEqual([
				[0, 1],
				[1, 1],
			]);
		} finally {
			execute.mockRestore();
		}
	});
});
