//! The checksum of θ a shared run keeps: in its result rows (computed by PostgreSQL in
//! `spsa.report`, where the update is applied) and in the owner's mirror that checks them. The θ
//! log files use another, `tuner::replay::checksum`: 32 bits computed on every row of a local
//! run, where SHA-256 of 50,000 values a row would cost more than the run's own arithmetic, and
//! no database needs to compute it too.
//!
//! `theta_checksum(θ)` is the first 8 bytes, read as a big-endian `u64`, of the SHA-256 of θ's
//! values written one after another as IEEE 754 binary64 in big-endian byte order (their bit
//! patterns: −0.0 and 0.0 differ, as do two NaNs of other payloads). It is SHA-256 rather than
//! a cheaper hash such as FNV-1a because the database must compute it bit for bit the same,
//! and PostgreSQL has `sha256(bytea)` and `float8send` (a float8's bytes, big-endian) built in
//! but no unsigned 64-bit multiply: `spsa.theta_checksum(float8[])` in `db/schema.sql` is
//! this function, returning the same 64 bits as a signed `bigint` (`as i64`).

use sha2::{Digest, Sha256};

/// The checksum of θ (see the module docs): equal for two θ exactly when, barring a 64-bit
/// collision, every value has the same bits.
pub fn theta_checksum(theta: &[f64]) -> u64 {
    let mut hash = Sha256::new();
    for x in theta {
        hash.update(x.to_bits().to_be_bytes());
    }
    let digest = hash.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

#[cfg(test)]
mod tests {
    use super::theta_checksum;

    #[test]
    fn pinned_values_and_bit_sensitivity() {
        // Pinned: the SQL side (`spsa.theta_checksum`) is tested against these in the suite.
        assert_eq!(theta_checksum(&[]), 0xe3b0_c442_98fc_1c14);
        assert_eq!(theta_checksum(&[1.0, -2.5]), 0xf6cf_2457_29bf_73f7);
        assert_ne!(theta_checksum(&[0.0]), theta_checksum(&[-0.0]));
        assert_ne!(theta_checksum(&[1.0, 2.0]), theta_checksum(&[2.0, 1.0]));
        assert_ne!(
            theta_checksum(&[1.0]),
            theta_checksum(&[f64::from_bits(1.0f64.to_bits() + 1)])
        );
    }
}
