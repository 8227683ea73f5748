import { controlOperation } from './control';

export const { description, execute } = controlOperation('cancel');
