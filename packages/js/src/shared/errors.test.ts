import { errorTypeOf, TesseraError } from './errors';

describe('TesseraError', () => {
  it('carries code, type, message and the wait of a rate limit', () => {
    const error = new TesseraError('rate_limited', 'Too many requests.', { retryAfter: 30 });
    expect(error).toBeInstanceOf(Error);
    expect({ name: error.name, code: error.code, type: error.type, message: error.message, retryAfter: error.retryAfter }).toEqual({
      name: 'TesseraError',
      code: 'rate_limited',
      type: 'rate_limit_error',
      message: 'Too many requests.',
      retryAfter: 30,
    });
    expect('retryAfter' in new TesseraError('destroyed', 'gone')).toBe(false);
  });

  it('types each code by who can act on it', () => {
    expect(errorTypeOf('invalid_number')).toBe('validation_error');
    expect(errorTypeOf('brand_not_accepted')).toBe('validation_error');
    expect(errorTypeOf('live_card_in_test_mode')).toBe('validation_error');
    expect(errorTypeOf('origin_not_allowed')).toBe('integration_error');
    expect(errorTypeOf('container_has_fields')).toBe('integration_error');
    expect(errorTypeOf('challenge_required')).toBe('rate_limit_error');
    expect(errorTypeOf('network_error')).toBe('network_error');
    expect(errorTypeOf('fields_unavailable')).toBe('api_error');
    // A code the API adds later: its envelope's type decides, else it is an API error.
    expect(errorTypeOf('some_new_card_refusal', 'invalid_request_error')).toBe('validation_error');
    expect(errorTypeOf('some_new_permission', 'permission_error')).toBe('integration_error');
    expect(errorTypeOf('something_else')).toBe('api_error');
  });
});
