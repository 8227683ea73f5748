// n8n's own community-node rules, as `n8n-node lint` applies them, for nodes/, credentials/ and
// package.json.
import { config } from '@n8n/node-cli/eslint';

export default config;
