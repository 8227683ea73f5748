import { forbidden, notFound } from '../httpError';
import type { Business } from '../model';

/**
 * SPEC 5 rule 2: a resource of another business is refused with 403; one that does not exist
 * anywhere is 404. (Contacts and messages answer 404 either way; they are people's data.)
 */
export function ownedByBusiness<T extends { businessId: string }>(
	business: Business,
	record: T | undefined,
	what: string,
	field: string,
	id: string,
): T {
	if (!record) throw notFound(`${field}: no ${what} with id ${id}`, field);
	if (record.businessId !== business.id)
		throw forbidden(`${field}: the ${what} ${id} belongs to another business`, field);
	return record;
}
