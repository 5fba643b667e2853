//! Where a scan's lanes, trips and vector components sit in each input and the output.
//!
//! The output has the sequences' shape (R axes): one axis is the trip axis, the last axis is
//! the state vector when the state is a vector, every other axis is a lane axis. Each operand
//! is read through a [`View`]: an offset, a stride per trip, a stride per component and a
//! stride per lane axis. A stride is 0 where the operand has size 1 (broadcast), so a
//! broadcast parameter is read in place and a width-one sequence gates a whole vector.

use crate::shape::Layout;

/// How one operand is addressed (element strides).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct View {
    pub offset: usize,
    pub trip: usize,
    pub comp: usize,
    /// One stride per lane axis.
    pub lane: Vec<usize>,
}

impl View {
    /// Element index of component 0, trip 0 of lane `lane` (row-major over `lane_shape`).
    pub fn base(&self, lane_shape: &[usize], lane: usize) -> usize {
        let mut rem = lane;
        let mut off = self.offset;
        for d in (0..lane_shape.len()).rev() {
            off += (rem % lane_shape[d]) * self.lane[d];
            rem /= lane_shape[d];
        }
        off
    }
}

/// The addressing of one scan: views of the initial state, each sequence, then the output.
#[derive(Clone, Debug)]
pub(crate) struct ScanLayout {
    pub lane_shape: Vec<usize>,
    pub trips: usize,
    pub reverse: bool,
    /// Components of the state (1 for a scalar state).
    pub width: usize,
    pub views: Vec<View>,
}

impl ScanLayout {
    /// `out_shape` (R axes) with the trip axis `axis`; `inputs` are the initial state's layout
    /// (R - 1 axes, no trip axis) and the sequences' (R axes), already checked to fit.
    pub fn new(out_shape: &[usize], axis: usize, vector: bool, reverse: bool, inputs: &[&Layout]) -> Self {
        let r = out_shape.len();
        let lane_axes: Vec<usize> = (0..r).filter(|&d| d != axis && !(vector && d == r - 1)).collect();
        let out = Layout::contiguous(out_shape);
        let view = |l: &Layout, is_init: bool| {
            // The operand's stride along output axis d (0 when broadcast or absent).
            let stride = |d: usize| -> usize {
                if is_init && d == axis {
                    return 0;
                }
                let j = if is_init && d > axis { d - 1 } else { d };
                if l.shape[j] == 1 {
                    0
                } else {
                    l.strides[j]
                }
            };
            View {
                offset: l.offset,
                trip: stride(axis),
                comp: if vector { stride(r - 1) } else { 0 },
                lane: lane_axes.iter().map(|&d| stride(d)).collect(),
            }
        };
        let mut views: Vec<View> = inputs.iter().enumerate().map(|(i, l)| view(l, i == 0)).collect();
        views.push(view(&out, false));
        ScanLayout {
            lane_shape: lane_axes.iter().map(|&d| out_shape[d]).collect(),
            trips: out_shape[axis],
            reverse,
            width: if vector { out_shape[r - 1] } else { 1 },
            views,
        }
    }

    /// Number of independent lanes.
    pub fn lanes(&self) -> usize {
        self.lane_shape.iter().product()
    }

    /// Elements of the output.
    pub fn out_len(&self) -> usize {
        self.lanes() * self.trips * self.width
    }
}
