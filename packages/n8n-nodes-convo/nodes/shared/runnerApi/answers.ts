/**
 * The answer each route of the runner's control API gives on success, by route name: for clients
 * (the node types its answers with z.infer of these) and for test/runner/apiContract.test.ts, which
 * parses real answers with them. Answers are loose: they name the fields a client may rely on, and
 * a runner may add others.
 */
import type { z } from 'zod/v4';

import type { RunnerRouteName } from '../runnerRoutes';
import {
	addRecipientsAnswer,
	campaignAnswer,
	campaignControlAnswer,
	campaignListAnswer,
	campaignReportAnswer,
	createCampaignAnswer,
	deleteCampaignAnswer,
	setCampaignRateAnswer,
	startCampaignAnswer,
} from './campaign';
import { budgetAnswer, budgetCountAnswer } from './budget';
import { reindexRunAnswer, startReindexAnswer } from './reindex';
import {
	addSuppressionAnswer,
	removeSuppressionAnswer,
	suppressionCheckAnswer,
	suppressionListAnswer,
} from './suppression';
import { createWebhookAnswer, recordReceiptAnswer, webhookAnswer } from './webhook';

export const RUNNER_ANSWERS = {
	createCampaign: createCampaignAnswer,
	getCampaign: campaignAnswer,
	listCampaigns: campaignListAnswer,
	addRecipients: addRecipientsAnswer,
	startCampaign: startCampaignAnswer,
	pauseCampaign: campaignControlAnswer,
	resumeCampaign: campaignControlAnswer,
	cancelCampaign: campaignControlAnswer,
	deleteCampaign: deleteCampaignAnswer,
	setCampaignRate: setCampaignRateAnswer,
	campaignReport: campaignReportAnswer,
	startReindex: startReindexAnswer,
	getReindexRun: reindexRunAnswer,
	createWebhook: createWebhookAnswer,
	getWebhook: webhookAnswer,
	recordReceipt: recordReceiptAnswer,
	addSuppression: addSuppressionAnswer,
	removeSuppression: removeSuppressionAnswer,
	checkSuppression: suppressionCheckAnswer,
	listSuppressions: suppressionListAnswer,
	getBudget: budgetAnswer,
	setBudget: budgetAnswer,
	clearBudget: budgetAnswer,
	countBudgetCustomer: budgetCountAnswer,
} satisfies Partial<Record<RunnerRouteName, z.ZodType>>;
