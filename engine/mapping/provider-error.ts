import { DomainError } from '../domain-error.ts';

/**
 * The one failure a remote mapping engine produces, whatever went wrong (refused connection, timeout, an error
 * body, a body that is not what its documentation promises): 502, so callers see the engine is at fault, not
 * their input, and the reason in words. `details.provider` and `details.reason` carry the same for machines.
 */
export function mappingProviderError(provider: string, reason: string): DomainError {
  return new DomainError(502, 'MAPPING_PROVIDER_ERROR', `mapping provider ${provider} failed: ${reason}`, undefined, {
    provider,
    reason,
  });
}

export function isMappingProviderError(error: unknown): error is DomainError {
  return error instanceof DomainError && error.code === 'MAPPING_PROVIDER_ERROR';
}
