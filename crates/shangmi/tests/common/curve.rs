//! A big-integer reference for curve arithmetic, to build test cases the library's own code
//! must not be trusted to build: affine points on y^2 = x^3 + a x + b over GF(p).

use num_bigint::BigUint;

/// Affine arithmetic on y^2 = x^3 + a x + b over GF(p), None for infinity.
pub struct Curve {
    pub p: BigUint,
    pub a: BigUint,
    pub n: BigUint,
}

pub type Pt = Option<(BigUint, BigUint)>;

impl Curve {
    pub fn inv(&self, x: &BigUint) -> BigUint {
        x.modpow(&(&self.p - 2u8), &self.p)
    }

    pub fn add(&self, p: &Pt, q: &Pt) -> Pt {
        let (Some((x1, y1)), Some((x2, y2))) = (p, q) else {
            return p.clone().or(q.clone());
        };
        let m = &self.p;
        let l = if x1 == x2 {
            if (y1 + y2) % m == BigUint::ZERO {
                return None;
            }
            (3u8 * x1 * x1 + &self.a) * self.inv(&(2u8 * y1)) % m
        } else {
            (y2 + m - y1) * self.inv(&((x2 + m - x1) % m)) % m
        };
        let x3 = (&l * &l + 2u8 * m - x1 - x2) % m;
        let y3 = (&l * ((x1 + m - &x3) % m) + m - y1) % m;
        Some((x3, y3))
    }

    pub fn mul(&self, k: &BigUint, p: &Pt) -> Pt {
        let mut acc = None;
        for i in (0..k.bits()).rev() {
            acc = self.add(&acc, &acc);
            if k.bit(i) {
                acc = self.add(&acc, p);
            }
        }
        acc
    }

    pub fn xbar(&self, x: &BigUint) -> BigUint {
        let w = BigUint::from(1u8) << 127u32;
        &w + (x % &w)
    }
}

pub fn b32(x: &BigUint) -> [u8; 32] {
    let v = x.to_bytes_be();
    let mut out = [0u8; 32];
    out[32 - v.len()..].copy_from_slice(&v);
    out
}

pub fn xy(p: &Pt) -> [u8; 64] {
    let (x, y) = p.clone().unwrap();
    [b32(&x), b32(&y)].concat().try_into().unwrap()
}

/// The SM2 recommended curve: the curve, b and the generator.
pub fn sm2() -> (Curve, BigUint, Pt) {
    let h = |s: &str| BigUint::parse_bytes(s.as_bytes(), 16).unwrap();
    let c = Curve {
        p: h("FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFFFFFFFFFF"),
        a: h("FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF00000000FFFFFFFFFFFFFFFC"),
        n: h("FFFFFFFEFFFFFFFFFFFFFFFFFFFFFFFF7203DF6B21C6052B53BBF40939D54123"),
    };
    let b = h("28E9FA9E9D9F5E344D5A9E4BCF6509A7F39789F515AB8F92DDBCBD414D940E93");
    let g = Some((
        h("32C4AE2C1F1981195F9904466A39C9948FE30BBFF2660BE1715A4589334C74C7"),
        h("BC3736A2F4F6779C59BDCEE36B692153D0A9877CC62A474002DF32E52139F0A0"),
    ));
    (c, b, g)
}

impl Curve {
    /// The point with this x, if there is one (p = 3 mod 4, so a root is one exponentiation).
    pub fn lift_x(&self, b: &BigUint, x: &BigUint) -> Pt {
        let m = &self.p;
        let rhs = (x * x * x + &self.a * x + b) % m;
        let y = rhs.modpow(&((m + 1u8) >> 2u32), m);
        ((&y * &y) % m == rhs).then(|| (x % m, y))
    }

    /// -P.
    pub fn neg(&self, p: &Pt) -> Pt {
        p.as_ref()
            .map(|(x, y)| (x.clone(), (&self.p - y) % &self.p))
    }

    /// x^-1 mod n.
    pub fn inv_n(&self, x: &BigUint) -> BigUint {
        x.modpow(&(&self.n - 2u8), &self.n)
    }
}
