//! Pick the next token from logits under an allowed-token mask, without allocating.
//!
//! Greedy when the temperature is 0, otherwise softmax sampling with a seeded generator,
//! optionally restricted to the nucleus (`top_p`) in a buffer the caller keeps between steps.
//! A logit bias (OpenAI `logit_bias`) is added before the mask is applied, so a bias can make
//! a token likely but never make a forbidden token possible. This module must not know
//! about grammars.

use llguidance::toktrie::SimpleVob;

/// Deterministic, seedable generator (splitmix64).
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// Uniform in [0, 1).
    pub(crate) fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn biased(logits: &[f32], bias: &[(u32, f32)], t: usize) -> f32 {
    let base = logits.get(t).copied().unwrap_or(f32::NEG_INFINITY);
    bias.iter()
        .filter(|(id, _)| *id as usize == t)
        .fold(base, |acc, (_, b)| acc + b)
}

/// Choose a token allowed by `mask`; `None` when the mask allows nothing.
pub(crate) fn pick(
    logits: &[f32],
    mask: &SimpleVob,
    bias: &[(u32, f32)],
    temperature: f32,
    rng: &mut Rng,
) -> Option<u32> {
    let mut best: Option<(usize, f32)> = None;
    mask.iter_set_entries(|t| {
        let l = biased(logits, bias, t);
        if best.is_none_or(|(_, b)| l > b) {
            best = Some((t, l));
        }
    });
    let (best_t, max) = best?;
    if temperature <= 0.0 || !max.is_finite() {
        return Some(best_t as u32);
    }
    let inv_t = 1.0 / f64::from(temperature);
    let mut total = 0.0f64;
    mask.iter_set_entries(|t| {
        total += ((f64::from(biased(logits, bias, t)) - f64::from(max)) * inv_t).exp()
    });
    let mut target = rng.next_f64() * total;
    let mut chosen = best_t;
    let mut done = false;
    mask.iter_set_entries(|t| {
        if done {
            return;
        }
        target -= ((f64::from(biased(logits, bias, t)) - f64::from(max)) * inv_t).exp();
        if target <= 0.0 {
            chosen = t;
            done = true;
        }
    });
    Some(chosen as u32)
}

/// Nucleus sampling: choose among the most likely allowed tokens whose probabilities add up
/// to `top_p`. `scratch` is reused between steps (it grows once to the allowed set's size).
/// Greedy at temperature 0; `top_p >= 1` is plain [`pick`].
pub(crate) fn pick_nucleus(
    logits: &[f32],
    mask: &SimpleVob,
    sampling: (&[(u32, f32)], f32, f32),
    rng: &mut Rng,
    scratch: &mut Vec<(u32, f64)>,
) -> Option<u32> {
    let (bias, temperature, top_p) = sampling;
    if temperature <= 0.0 || top_p >= 1.0 {
        return pick(logits, mask, bias, temperature, rng);
    }
    scratch.clear();
    let mut max = f32::NEG_INFINITY;
    mask.iter_set_entries(|t| max = max.max(biased(logits, bias, t)));
    if !max.is_finite() {
        return pick(logits, mask, bias, 0.0, rng);
    }
    let inv_t = 1.0 / f64::from(temperature);
    let mut total = 0.0f64;
    mask.iter_set_entries(|t| {
        let w = ((f64::from(biased(logits, bias, t)) - f64::from(max)) * inv_t).exp();
        total += w;
        scratch.push((t as u32, w));
    });
    scratch.sort_unstable_by(|a, b| b.1.total_cmp(&a.1));
    let keep_mass = total * f64::from(top_p.max(0.0));
    let mut kept = 0usize;
    let mut mass = 0.0f64;
    for &(_, w) in scratch.iter() {
        kept += 1;
        mass += w;
        if mass >= keep_mass {
            break;
        }
    }
    let mut target = rng.next_f64() * mass;
    for &(t, w) in &scratch[..kept] {
        target -= w;
        if target <= 0.0 {
            return Some(t);
        }
    }
    scratch.first().map(|&(t, _)| t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_top_p_keeps_only_the_most_likely_token() {
        let logits = [0.0f32, 5.0, 4.9, -1.0];
        let m = mask(&[true, true, true, true]);
        let mut rng = Rng::new(7);
        let mut scratch = Vec::new();
        for _ in 0..50 {
            let t = pick_nucleus(&logits, &m, (&[], 1.0, 0.01), &mut rng, &mut scratch);
            assert_eq!(t, Some(1));
        }
        // With the whole nucleus, the second token is drawn too.
        let drawn: Vec<_> = (0..200)
            .filter_map(|_| pick_nucleus(&logits, &m, (&[], 1.0, 0.9), &mut rng, &mut scratch))
            .collect();
        assert!(drawn.contains(&1) && drawn.contains(&2), "{drawn:?}");
        assert!(!drawn.contains(&3), "{drawn:?}");
    }

    fn mask(bits: &[bool]) -> SimpleVob {
        SimpleVob::from_slice(bits)
    }

    #[test]
    fn greedy_respects_the_mask_and_the_bias() {
        let logits = [5.0, 1.0, 3.0];
        let mut rng = Rng::new(1);
        assert_eq!(
            pick(&logits, &mask(&[false, true, true]), &[], 0.0, &mut rng),
            Some(2)
        );
        assert_eq!(
            pick(
                &logits,
                &mask(&[false, true, true]),
                &[(1, 10.0)],
                0.0,
                &mut rng
            ),
            Some(1)
        );
        assert_eq!(
            pick(
                &logits,
                &mask(&[false, true, false]),
                &[(0, 100.0)],
                0.0,
                &mut rng
            ),
            Some(1)
        );
        assert_eq!(
            pick(&logits, &mask(&[false, false, false]), &[], 0.0, &mut rng),
            None
        );
    }

    #[test]
    fn sampling_is_seeded_and_stays_in_the_mask() {
        let logits = [0.0f32; 8];
        let m = mask(&[false, true, false, true, false, true, false, false]);
        let run = |seed| {
            let mut rng = Rng::new(seed);
            (0..32)
                .map(|_| pick(&logits, &m, &[], 1.0, &mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert!(run(7).iter().all(|t| matches!(t, Some(1 | 3 | 5))));
    }
}
