"""Option pricing: Black-Scholes with the normal CDF, and a Monte-Carlo payoff."""
import numpy as np
from scipy.stats import norm

from realistic import Case


def black_scholes_call(S, K, T, r, sigma):
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    d2 = d1 - sigma * np.sqrt(T)
    return S * norm.cdf(d1) - K * np.exp(-r * T) * norm.cdf(d2)


def portfolio_value(sigma, S, K, T, r, weights):
    calls = black_scholes_call(S, K, T, r, sigma)
    d1 = (np.log(S / K) + (r + 0.5 * sigma ** 2) * T) / (sigma * np.sqrt(T))
    puts = K * np.exp(-r * T) * norm.cdf(-d1 + sigma * np.sqrt(T)) - S * norm.cdf(-d1)
    return np.dot(weights, calls) + np.sum(puts * norm.pdf(d1))


def smooth_mc_payoff(S0, sigma, z, K, T, r):
    ST = S0 * np.exp((r - 0.5 * sigma ** 2) * T + sigma * np.sqrt(T) * z)
    payoff = np.logaddexp(0.0, 10 * (ST - K)) / 10
    return np.exp(-r * T) * np.mean(payoff)


def cases():
    rng = np.random.default_rng(9)
    S = rng.uniform(80, 120, 4)
    K = np.full(4, 100.0)
    T = rng.uniform(0.5, 2.0, 4)
    return [
        Case("finance.black_scholes_vega", portfolio_value, (rng.uniform(0.1, 0.4, 4), S, K, T, 0.02, rng.uniform(0, 1, 4)), (0, 1, 3)),
        Case("finance.mc_payoff", smooth_mc_payoff, (100.0, 0.25, rng.standard_normal(16), 100.0, 1.0, 0.03), (0, 1)),
    ]
