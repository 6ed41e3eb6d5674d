//! Pick the next token from logits under an allowed-token mask, without allocating.
//!
//! Greedy when the temperature is 0, otherwise softmax sampling with a seeded generator,
//! optionally restricted to the nucleus (`top_p`) in a buffer the caller keeps between steps.
//! A logit bias (OpenAI `logit_bias`) is added before the mask is applied, so a bias can make
//! a token likely but never make a forbidden token possible; it is one dense vector over the
//! vocabulary ([`Bias`]), built once before decoding, with every id checked against the
//! vocabulary. This module must not know about grammars.

use crate::error::EngineError;
use llguidance::toktrie::SimpleVob;

/// A request's logit bias, one entry per token of the vocabulary (empty when there is none),
/// so a token's bias is one index rather than a scan of the request's list.
#[derive(Debug, Default)]
pub(crate) struct Bias(Vec<f32>);

impl Bias {
    /// The bias of `entries` (ids repeated add up) over a vocabulary of `n_vocab` tokens; an
    /// id outside it is an error.
    pub(crate) fn new(entries: &[(u32, f32)], n_vocab: usize) -> Result<Self, EngineError> {
        if entries.is_empty() {
            return Ok(Self::default());
        }
        crate::tokenizer::check_bias_ids(entries, n_vocab)?;
        let mut dense = vec![0.0; n_vocab];
        for &(id, b) in entries {
            dense[id as usize] += b;
        }
        Ok(Self(dense))
    }

    fn at(&self, t: usize) -> f32 {
        self.0.get(t).copied().unwrap_or(0.0)
    }
}

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

fn biased(logits: &[f32], bias: &Bias, t: usize) -> f32 {
    logits.get(t).copied().unwrap_or(f32::NEG_INFINITY) + bias.at(t)
}

/// Choose a token allowed by `mask`; `None` when the mask allows nothing.
pub(crate) fn pick(
    logits: &[f32],
    mask: &SimpleVob,
    bias: &Bias,
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
    sampling: (&Bias, f32, f32),
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
            let t = pick_nucleus(
                &logits,
                &m,
                (&Bias::default(), 1.0, 0.01),
                &mut rng,
                &mut scratch,
            );
            assert_eq!(t, Some(1));
        }
        // With the whole nucleus, the second token is drawn too.
        let drawn: Vec<_> = (0..200)
            .filter_map(|_| {
                pick_nucleus(
                    &logits,
                    &m,
                    (&Bias::default(), 1.0, 0.9),
                    &mut rng,
                    &mut scratch,
                )
            })
            .collect();
        assert!(drawn.contains(&1) && drawn.contains(&2), "{drawn:?}");
        assert!(!drawn.contains(&3), "{drawn:?}");
    }

    fn mask(bits: &[bool]) -> SimpleVob {
        SimpleVob::from_slice(bits)
    }

    fn bias(entries: &[(u32, f32)]) -> Bias {
        Bias::new(entries, 3).expect("ids in the vocabulary")
    }

    #[test]
    fn a_bias_is_one_dense_vector_checked_against_the_vocabulary() {
        let b = bias(&[(2, 1.5), (2, 0.5), (0, -1.0)]);
        assert_eq!(b.0, [-1.0, 0.0, 2.0]);
        assert!(Bias::default().0.is_empty(), "no bias, no vector");
        let e = Bias::new(&[(3, 1.0)], 3).expect_err("outside the vocabulary");
        assert_eq!(e.kind(), "invalid_request");
        assert!(e.to_string().contains("vocabulary of 3"), "{e}");
    }

    /// The 250,000-entry bias took 31 s for 2 tokens: one scan of the list per
    /// allowed token. A dense bias is one index.
    #[test]
    fn a_large_bias_costs_one_index_per_token() {
        let n = 150_000;
        let entries: Vec<(u32, f32)> = (0..n).map(|i| (i, 0.1)).collect();
        let logits = vec![0.0f32; n as usize];
        let m = SimpleVob::alloc_ones(n as usize);
        let t = std::time::Instant::now();
        let b = Bias::new(&entries, n as usize).expect("in the vocabulary");
        let mut rng = Rng::new(3);
        for _ in 0..10 {
            assert!(pick(&logits, &m, &b, 1.0, &mut rng).is_some());
        }
        assert!(t.elapsed().as_secs_f64() < 1.0, "{:?}", t.elapsed());
    }

    #[test]
    fn greedy_respects_the_mask_and_the_bias() {
        let logits = [5.0, 1.0, 3.0];
        let mut rng = Rng::new(1);
        assert_eq!(
            pick(
                &logits,
                &mask(&[false, true, true]),
                &Bias::default(),
                0.0,
                &mut rng
            ),
            Some(2)
        );
        assert_eq!(
            pick(
                &logits,
                &mask(&[false, true, true]),
                &bias(&[(1, 10.0)]),
                0.0,
                &mut rng
            ),
            Some(1)
        );
        assert_eq!(
            pick(
                &logits,
                &mask(&[false, true, false]),
                &bias(&[(0, 100.0)]),
                0.0,
                &mut rng
            ),
            Some(1)
        );
        assert_eq!(
            pick(
                &logits,
                &mask(&[false, false, false]),
                &Bias::default(),
                0.0,
                &mut rng
            ),
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
                .map(|_| pick(&logits, &m, &Bias::default(), 1.0, &mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert!(run(7).iter().all(|t| matches!(t, Some(1 | 3 | 5))));
    }
}
