// Merchant data shared by the services that serve one merchant's requests and the ones that
// administer them: API keys, merchant settings, return URLs, the request log, the audit trail and the
// hosted page's form sessions and CVC sessions (opened on /v1, used on the fields origin),
// each with the domain rules its store needs. Key names in Redis are part of the contract.
export * from './domain/slots';
export * from './domain/randomIds';
export * from './domain/eventTypes';
export * from './domain/events';
export * from './domain/eventsDoc';
export * from './domain/webhookEndpoints';
export * from './domain/apiKeys';
export * from './domain/apiKeyDecision';
export * from './domain/keyRestrictions';
export * from './domain/browserKeys';
export * from './domain/pspHosts';
export * from './domain/returnUrls';
export * from './domain/requestLog';
export * from './domain/detokenizationAudit';
export * from './domain/adminAudit';
export * from './domain/formSessions';
export * from './domain/currencies';
export * from './domain/cvcSessions';
export * from './domain/contentSecurityPolicy';
export * from './domain/pageInventory';
export * from './store/merchantSettingsStore';
export * from './store/requestLogStore';
export * from './store/detokenizationLog';
export * from './store/apiKeyStore';
export * from './store/redisApiKeyStore';
export * from './store/apiKeyMoveRequests';
export * from './store/auditLog';
export * from './store/formSessionStore';
export * from './store/eventStore';
export * from './store/sweepLease';
export * from './store/webhookEndpointStore';
export * from './store/webhookDeliveryStore';
export * from './store/cvcSessionStore';
export * from './store/pageInventoryStore';
export * from './store/scriptAuthorizationStore';
export * from './apiKeyPepper';
export * from './eventEmission';
export * from './store/shredOrderStore';
export * from './store/approvalOrderStore';
export * from './store/exportOrderStore';
export * from './domain/cardImportLayout';
