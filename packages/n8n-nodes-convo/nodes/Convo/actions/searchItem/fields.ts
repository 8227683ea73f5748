import { identifierField } from '../../descriptions/common.description';

export const collectionIdField = identifierField({
	displayName: 'Collection ID',
	name: 'collectionId',
	description:
		'ID of the search collection, shown with the collection in the Convo dashboard ' +
		'(collection_id in Search Item outputs)',
});
