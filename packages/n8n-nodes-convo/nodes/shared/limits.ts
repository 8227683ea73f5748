/** The documented limits of the service (SPEC section 8). Written here once; everything else reads them. */
export const LIMITS = {
	/** POST /messages/send: at most this many metadata pairs. */
	metadataPairs: 10,
	/** POST /messages/send: metadata key length in characters. */
	metadataKeyLength: 50,
	/** POST /messages/send: metadata value length in characters. */
	metadataValueLength: 500,
	/** GET /conversations: message_limit. */
	conversationMessageLimit: { default: 50, max: 200 },
	/** GET /contacts/:uuid/messages: limit. */
	contactMessagesLimit: { default: 100, max: 200 },
	/** POST /messages/send: the customer-care window; outside it a template message is required. */
	customerCareWindowMs: 24 * 60 * 60 * 1000,
} as const;
