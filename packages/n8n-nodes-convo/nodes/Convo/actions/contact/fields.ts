import { identifierField } from '../../descriptions/common.description';

export const contactUuidField = identifierField({
	displayName: 'Contact ID',
	name: 'contactUuid',
	description:
		"The contact's ID: contact.uuid in the Convo Trigger output, contact.id from Conversation → Get, " +
		"or By URL the contact's dashboard link (href in contact outputs)",
	dashboardPath: 'contacts',
});
