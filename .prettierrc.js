// One style for the whole repository: the node pack's, which is n8n's (tabs, single quotes, width 120).
module.exports = require('./packages/n8n-nodes-convo/.prettierrc.js');
