"""Fine-grained, multi-style personas for the ranking-quality protocol (issue 15).

The public protocol (QUALITY.md, quality_data.py) groups arXiv categories into 9 coarse
topics and gives each persona one sentence-style interests text; neither punishes a profile
whose single clause ("convergence rates", "regularity") also matches a neighbouring
subject. This module adds personas who each like one fine-grained arXiv subject (hep-ph vs
hep-th vs hep-ex, the cond-mat subfields, the math subjects …) and write their interests
in four styles:

- ``sentence``: one sentence, as in the public protocol;
- ``list``: a researcher's comma-separated list of sub-topics;
- ``keywords``: two to four keywords;
- ``paragraph``: a long paragraph about their work.

The texts were written once, from general knowledge of each field, BEFORE any tuning, and
are committed before the tuning commits so the history shows it; they are not adjusted to
the results. The subjects are split once into a tuning half (for deciding constants) and a
reporting half (the only figures reported); a subject's four styles stay in the same half.

Relevance (as QUALITY.md grades it, at the subject level): 1.0 if the paper's primary
category is the subject, 0.5 if the subject is only among its cross-listed categories,
else 0. Every other part of the protocol (split, loop, budgets, metrics, anchors) is the
public one's.
"""

from __future__ import annotations

from dataclasses import dataclass

from quality_data import Paper

STYLES = ("sentence", "list", "keywords", "paragraph")

#: subject -> {style: interests text}. Subjects: primary categories with >= 20 papers in
#: arxiv-2000, except astro-ph (no subfields in 2007), cond-mat.other and physics.gen-ph
#: (catch-alls no researcher would name as their subject).
INTERESTS: dict[str, dict[str, str]] = {
    "hep-ph": {
        "sentence": "I do particle phenomenology: predictions for collider experiments and "
        "physics beyond the Standard Model.",
        "list": "Higgs boson production, supersymmetry phenomenology, QCD corrections, "
        "parton distribution functions, neutrino masses and mixing, dark matter "
        "candidates",
        "keywords": "collider phenomenology, beyond the Standard Model",
        "paragraph": "My research is in particle physics phenomenology. I compute cross "
        "sections and decay rates for processes at the LHC and the Tevatron, "
        "including higher-order QCD corrections and resummation, and study how "
        "new physics such as supersymmetry, extra dimensions or extended Higgs "
        "sectors would show up in the data. I am also interested in flavour "
        "physics, CP violation, neutrino oscillations and the particle nature "
        "of dark matter.",
    },
    "hep-th": {
        "sentence": "I work on string theory and quantum field theory, especially dualities "
        "and the AdS/CFT correspondence.",
        "list": "AdS/CFT correspondence, D-branes, string compactifications, supersymmetric "
        "gauge theories, conformal field theory, black hole entropy",
        "keywords": "string theory, holography, branes",
        "paragraph": "I am a theoretical physicist working on the formal side of high-energy "
        "physics. My work uses string theory and supersymmetric quantum field "
        "theory: gauge/gravity duality and its applications, D-brane "
        "constructions, flux compactifications and the string landscape, "
        "integrability in N=4 super Yang-Mills, and the microscopic counting of "
        "black hole entropy. I also follow non-commutative geometry and exact "
        "results in two-dimensional conformal field theories.",
    },
    "hep-ex": {
        "sentence": "I am an experimental particle physicist analysing data from collider and B-factory experiments.",
        "list": "measurements at the Tevatron, B meson decays at BaBar and Belle, top quark "
        "mass measurement, detector calibration, cross section measurements, "
        "searches for new particles",
        "keywords": "experimental particle physics, detector data",
        "paragraph": "I work in experimental high-energy physics. Our group analyses data "
        "recorded by detectors at colliders such as the Tevatron and the "
        "B-factories: we measure branching fractions and CP asymmetries of B "
        "meson decays, the top quark and W boson masses, and production cross "
        "sections, and we set limits in searches for new particles. I care "
        "about event selection, background estimation, systematic "
        "uncertainties and the calibration of tracking and calorimeter "
        "systems.",
    },
    "quant-ph": {
        "sentence": "I study quantum information: entanglement, quantum computation and quantum communication.",
        "list": "entanglement measures, quantum error correction, quantum key distribution, "
        "decoherence, quantum algorithms, quantum teleportation",
        "keywords": "quantum information, entanglement",
        "paragraph": "My field is quantum information and the foundations of quantum "
        "mechanics. I work on how to quantify and detect entanglement, on "
        "quantum channels and their capacities, on protocols for quantum "
        "cryptography and teleportation, and on fault-tolerant quantum "
        "computation with error-correcting codes. I also follow experiments "
        "with trapped ions, photons and superconducting qubits, and the "
        "theory of decoherence in open quantum systems.",
    },
    "gr-qc": {
        "sentence": "I work on general relativity, black holes and gravitational waves.",
        "list": "black hole spacetimes, gravitational wave sources, numerical relativity, "
        "cosmological models, loop quantum gravity, alternative theories of gravity",
        "keywords": "general relativity, gravitation",
        "paragraph": "I am a relativist. My research covers exact solutions of Einstein's "
        "equations and black hole physics, the generation of gravitational "
        "waves by compact binaries and their detection with interferometers, "
        "and relativistic cosmology including dark energy and modified "
        "gravity. I also follow canonical approaches to quantum gravity, loop "
        "quantum cosmology and the problem of time.",
    },
    "nucl-th": {
        "sentence": "I am a nuclear theorist working on nuclear structure and nuclear reactions.",
        "list": "nuclear shell model, mean-field calculations, nucleon-nucleon interaction, "
        "effective field theory for nuclei, heavy-ion collision models, "
        "nuclear equation of state",
        "keywords": "nuclear theory, nuclear structure",
        "paragraph": "My work is in theoretical nuclear physics. I compute properties of "
        "nuclei with the shell model, density functional and mean-field "
        "methods and ab initio approaches based on chiral effective field "
        "theory, and I model nuclear reactions, from few-nucleon scattering to "
        "heavy-ion collisions and the hydrodynamics of the quark-gluon plasma. "
        "The equation of state of dense nuclear matter and its role in neutron "
        "stars is another interest.",
    },
    "nucl-ex": {
        "sentence": "I am an experimental nuclear physicist measuring nuclear reactions and heavy-ion collisions.",
        "list": "RHIC measurements, particle production in heavy-ion collisions, "
        "elliptic flow, nuclear reaction cross sections, exotic nuclei "
        "spectroscopy, beam experiments",
        "keywords": "experimental nuclear physics",
        "paragraph": "I work in experimental nuclear physics. At accelerator facilities we "
        "measure particle spectra, collective flow and jet suppression in "
        "gold-gold and copper-copper collisions at RHIC, and we study the "
        "structure of nuclei far from stability with gamma-ray spectroscopy "
        "and reaction experiments. I am interested in detector performance, "
        "the measurement of cross sections and lifetimes, and comparing our "
        "data with transport and hydrodynamic models.",
    },
    "math-ph": {
        "sentence": "I work in mathematical physics: rigorous results about quantum and classical physical systems.",
        "list": "Schrodinger operators, spectral theory, integrable systems, random matrix "
        "models, quantum field theory rigorous results, exactly solvable models",
        "keywords": "mathematical physics, spectral theory",
        "paragraph": "My research is in mathematical physics. I prove theorems about models "
        "that come from physics: the spectrum of Schrodinger operators and "
        "Anderson localisation, integrable systems and their Lax pairs, exactly "
        "solvable lattice models, the semiclassical limit, and the mathematical "
        "structure of quantum mechanics and quantum field theory. I like "
        "results that are both rigorous and close to what physicists compute.",
    },
    "cond-mat.str-el": {
        "sentence": "I study strongly correlated electron systems.",
        "list": "Hubbard model, Mott transition, heavy fermions, frustrated magnets, spin liquids, Kondo effect",
        "keywords": "strongly correlated electrons",
        "paragraph": "My research is on strongly correlated electrons. I study how "
        "interactions between electrons produce Mott insulators, heavy-fermion "
        "behaviour, unconventional magnetism and quantum phase transitions, "
        "using the Hubbard and t-J models, dynamical mean-field theory, "
        "exact diagonalisation and the density-matrix renormalisation group. "
        "Frustrated magnets, quantum spin liquids and the Kondo effect in "
        "transition-metal oxides are recurring themes.",
    },
    "cond-mat.mtrl-sci": {
        "sentence": "I work on the physics of materials, combining first-principles calculations with experiments.",
        "list": "density functional theory calculations, thin film growth, defects in "
        "semiconductors, oxide interfaces, elastic properties, phase stability",
        "keywords": "materials science, DFT",
        "paragraph": "I am a materials physicist. I use density functional theory and "
        "molecular dynamics to predict the structure, electronic bands, "
        "defects and mechanical properties of solids, and I work with "
        "experimentalists who grow thin films and nanostructures and "
        "characterise them by X-ray diffraction, electron microscopy and "
        "spectroscopy. Semiconductors, oxides, alloys and their surfaces and "
        "interfaces are what I know best.",
    },
    "cond-mat.mes-hall": {
        "sentence": "I work on mesoscopic physics and electronic transport in nanostructures.",
        "list": "quantum dots, graphene, quantum Hall effect, spin transport, Coulomb blockade, nanowires",
        "keywords": "mesoscopic transport, nanostructures",
        "paragraph": "My field is mesoscopic and nanoscale physics. I study electron "
        "transport through quantum dots, nanowires, carbon nanotubes and "
        "graphene, including Coulomb blockade, shot noise and interference "
        "effects, spin-orbit coupling and spintronics, and the integer and "
        "fractional quantum Hall effects in two-dimensional electron gases. "
        "I work both on theory and with device experiments at low temperature.",
    },
    "cond-mat.stat-mech": {
        "sentence": "I work on statistical mechanics and non-equilibrium physics.",
        "list": "phase transitions, critical phenomena, non-equilibrium steady states, "
        "fluctuation theorems, stochastic processes, exclusion processes",
        "keywords": "statistical mechanics, non-equilibrium",
        "paragraph": "I am a statistical physicist. My work concerns phase transitions and "
        "critical behaviour in lattice models, non-equilibrium systems such "
        "as driven diffusive systems and the asymmetric exclusion process, "
        "fluctuation theorems and stochastic thermodynamics, and random walks "
        "and Langevin dynamics. I use exact solutions, renormalisation group "
        "arguments and Monte Carlo simulations.",
    },
    "cond-mat.supr-con": {
        "sentence": "I study superconductivity, especially unconventional and high-temperature superconductors.",
        "list": "cuprate superconductors, pairing symmetry, pseudogap, vortex dynamics, Josephson junctions, MgB2",
        "keywords": "superconductivity, cuprates",
        "paragraph": "My research is on superconductivity. I am interested in the "
        "mechanism of high-temperature superconductivity in the cuprates, the "
        "d-wave pairing symmetry and the pseudogap phase, as well as "
        "multiband superconductors like MgB2. I also work on vortex matter "
        "and flux pinning, Josephson junctions and the proximity effect, and "
        "on measurements of the penetration depth, specific heat and tunnelling "
        "spectra of superconducting samples.",
    },
    "cond-mat.soft": {
        "sentence": "I work on soft condensed matter: polymers, colloids and liquid crystals.",
        "list": "polymer dynamics, colloidal suspensions, liquid crystals, granular "
        "materials, membranes and vesicles, glass transition",
        "keywords": "soft matter, polymers, colloids",
        "paragraph": "I am a soft matter physicist. I study the structure and dynamics of "
        "polymers in solution and melts, colloidal suspensions and their "
        "self-assembly, liquid crystals, foams, granular media and lipid "
        "membranes. Rheology, the jamming and glass transitions, and "
        "coarse-grained simulations of complex fluids are the tools and "
        "questions I come back to.",
    },
    "cond-mat.dis-nn": {
        "sentence": "I study disordered systems: spin glasses, localisation and neural networks.",
        "list": "spin glasses, Anderson localization, replica method, random energy models, "
        "percolation, neural network models",
        "keywords": "disordered systems, spin glasses",
        "paragraph": "My research is on disordered and complex systems. I work on spin "
        "glasses and the replica and cavity methods, Anderson localisation of "
        "waves and electrons in random media, percolation, and the "
        "statistical mechanics of neural networks and of random optimisation "
        "and constraint satisfaction problems. Slow dynamics and ageing in "
        "glassy systems are also part of my work.",
    },
    "math.PR": {
        "sentence": "I am a probabilist working on stochastic processes and random structures.",
        "list": "Brownian motion, random walks, stochastic differential equations, "
        "large deviations, martingales, random graphs",
        "keywords": "probability theory, stochastic processes",
        "paragraph": "I work in probability theory. My research involves Brownian motion "
        "and Levy processes, stochastic differential and partial differential "
        "equations, large deviation principles, random walks in random "
        "environments, interacting particle systems, and random graphs and "
        "percolation. I am interested in limit theorems and in the "
        "probabilistic side of statistical mechanics.",
    },
    "math.AG": {
        "sentence": "I am an algebraic geometer.",
        "list": "moduli spaces, Calabi-Yau varieties, Hodge theory, birational geometry, "
        "derived categories of coherent sheaves, toric varieties",
        "keywords": "algebraic geometry, varieties",
        "paragraph": "My research is in algebraic geometry. I study moduli spaces of curves "
        "and of sheaves, the birational classification of varieties and the "
        "minimal model program, Hodge theory and algebraic cycles, and derived "
        "categories of coherent sheaves and their relation to mirror "
        "symmetry. Toric and Calabi-Yau varieties provide many of my examples.",
    },
    "math.AP": {
        "sentence": "I work on the analysis of partial differential equations.",
        "list": "Navier-Stokes equations, nonlinear Schrodinger equations, well-posedness, "
        "elliptic regularity, blow-up of solutions, dispersive estimates",
        "keywords": "partial differential equations, analysis",
        "paragraph": "I am an analyst working on partial differential equations. I study "
        "existence, uniqueness and regularity of solutions to nonlinear "
        "elliptic, parabolic and dispersive equations, including the "
        "Navier-Stokes and Euler equations of fluid dynamics and nonlinear "
        "Schrodinger and wave equations. Questions of global well-posedness, "
        "blow-up, long-time behaviour and Strichartz estimates are central to "
        "my work.",
    },
    "math.CO": {
        "sentence": "I work in combinatorics and graph theory.",
        "list": "graph colouring, extremal combinatorics, enumeration of permutations, "
        "Ramsey theory, matroids, random graphs",
        "keywords": "combinatorics, graph theory",
        "paragraph": "My research is in combinatorics. I work on extremal and probabilistic "
        "problems in graph theory such as colourings, Ramsey numbers and "
        "Turan-type questions, on enumerative combinatorics of permutations, "
        "partitions and lattice paths with generating functions, and on "
        "algebraic combinatorics including symmetric functions and matroids. "
        "Designs and additive combinatorics are also of interest.",
    },
    "math.NT": {
        "sentence": "I am a number theorist.",
        "list": "modular forms, L-functions, elliptic curves, Diophantine equations, "
        "prime distribution, Galois representations",
        "keywords": "number theory, modular forms",
        "paragraph": "I work in number theory. My interests include modular forms and "
        "automorphic representations, special values of L-functions, the "
        "arithmetic of elliptic curves and abelian varieties, Galois "
        "representations, Diophantine equations and approximation, and "
        "analytic questions about the distribution of primes and exponential "
        "sums.",
    },
    "math.DG": {
        "sentence": "I work in differential geometry.",
        "list": "Riemannian manifolds, Ricci flow, minimal surfaces, Kahler geometry, "
        "curvature bounds, geometric flows",
        "keywords": "differential geometry, Riemannian geometry",
        "paragraph": "My research is in differential geometry. I study Riemannian manifolds "
        "under curvature conditions, geometric evolution equations such as "
        "the Ricci flow and mean curvature flow, minimal and constant mean "
        "curvature submanifolds, Kahler and Einstein metrics, and the "
        "geometry of connections and gauge theory on manifolds.",
    },
    "math.CV": {
        "sentence": "I work in complex analysis in one and several variables.",
        "list": "holomorphic functions, conformal mappings, pluripotential theory, "
        "Bergman kernel, value distribution theory, quasiconformal maps",
        "keywords": "complex analysis, holomorphic functions",
        "paragraph": "I am a complex analyst. My work concerns holomorphic and meromorphic "
        "functions of one and several complex variables: univalent functions "
        "and conformal mapping, Nevanlinna value distribution theory, "
        "pluripotential theory and plurisubharmonic functions, the Bergman "
        "kernel and the d-bar problem on pseudoconvex domains, and "
        "quasiconformal mappings.",
    },
    "physics.optics": {
        "sentence": "I work in optics and photonics.",
        "list": "photonic crystals, nonlinear optics, optical fibers, metamaterials, "
        "ultrashort laser pulses, plasmonics",
        "keywords": "optics, photonics, lasers",
        "paragraph": "My research is in optics and photonics. I study light propagation in "
        "photonic crystals, waveguides and optical fibres, nonlinear optical "
        "effects such as solitons and supercontinuum generation, "
        "metamaterials and surface plasmons, and the generation and "
        "characterisation of ultrashort laser pulses. Both numerical modelling "
        "and laboratory experiments are part of my work.",
    },
    "cs.IT": {
        "sentence": "I work in information theory and coding for communication systems.",
        "list": "channel capacity, error-correcting codes, MIMO systems, network coding, "
        "rate-distortion theory, wireless fading channels",
        "keywords": "information theory, coding",
        "paragraph": "I am an information theorist. My research covers the capacity of "
        "wireless and multiple-antenna channels, multi-user information theory "
        "for broadcast, relay and interference channels, the design and "
        "decoding of error-correcting codes such as LDPC and turbo codes, "
        "network coding, and source coding and rate-distortion theory.",
    },
}

#: The fixed split, decided once before tuning: each neighbourhood (hep/nucl, cond-mat,
#: math, other) has subjects on both sides. Constants are chosen on TUNING; only REPORTING
#: figures are reported.
TUNING = (
    "hep-ph",
    "nucl-th",
    "gr-qc",
    "physics.optics",
    "math-ph",
    "cond-mat.str-el",
    "cond-mat.mes-hall",
    "cond-mat.soft",
    "cond-mat.dis-nn",
    "math.PR",
    "math.CO",
    "math.DG",
)
REPORTING = (
    "hep-th",
    "hep-ex",
    "nucl-ex",
    "quant-ph",
    "cs.IT",
    "cond-mat.mtrl-sci",
    "cond-mat.stat-mech",
    "cond-mat.supr-con",
    "math.AG",
    "math.AP",
    "math.NT",
    "math.CV",
)
assert sorted(TUNING + REPORTING) == sorted(INTERESTS)


@dataclass(frozen=True)
class FinePersona:
    name: str
    subject: str
    style: str
    interests: str

    def relevance(self, paper: Paper) -> float:
        categories = paper.categories
        if categories and categories[0] == self.subject:
            return 1.0
        if self.subject in categories:
            return 0.5
        return 0.0


def make_fine_personas(half: str) -> list[FinePersona]:
    subjects = {"tuning": TUNING, "reporting": REPORTING, "all": TUNING + REPORTING}[half]
    return [FinePersona(f"{s}/{style}", s, style, INTERESTS[s][style]) for s in subjects for style in STYLES]
