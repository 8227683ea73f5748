// The contract lives in the node pack (packages/n8n-nodes-convo/nodes/shared), which imports it
// relatively so that the pack's folder builds and lints alone; the runner and the sandbox import
// the same files by this package's name.
export * from '../n8n-nodes-convo/nodes/shared';
