// Shared with the gateway's and the packages' tests.
export { TEST_PEPPER } from '../../../../packages/merchant-data/src/testing/fixtures';
export { captureLogger } from '../../../../packages/edge/src/testing/logger';
export { aCardBody, aTokenRecord, recordingTokenize } from '../../../../packages/edge/src/testing/tokenRecords';
export { startApp, type RunningApp, type TestResponse } from '../../../../packages/edge/src/testing/http';
