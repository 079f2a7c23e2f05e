export { Tessera, SDK_VERSION, type TesseraOptions } from './client';
export * from './errors';
export type * from './types';
export {
  verifyFormSessionReturn,
  formSessionReturnPayload,
  signFormSessionReturn,
  FormSessionReturnError,
  type FormSessionReturn,
  type VerifyFormSessionReturnOptions,
} from './formSessions';
export {
  verifyCompletionSignature,
  signCompletionCall,
  CompletionSignatureError,
  COMPLETION_SIGNATURE_HEADER,
  type FormSessionCompletion,
  type FormSessionCompletionAnswer,
  type VerifyCompletionOptions,
} from './completionSignature';
export {
  webhooks,
  constructEvent,
  signWebhookPayload,
  WebhookSignatureError,
  WEBHOOK_SIGNATURE_HEADER,
  type WebhookEvent,
  type WebhookSignatureFailureReason,
  type ConstructEventOptions,
} from './webhooks';
