/**
 * worksync: the public library API.
 */
export {}
