"""Line charts as hand-written SVG (no plotting dependency), for the benchmark reports: the
soak's RSS and p99 over time, and the side-by-side benchmark's latency distributions."""
import math

COLORS = {"rust": "#d24b1f", "go": "#1f77b4"}


def line_chart(lines, title, x_label, y_label, x_ticks=None, y_log=False, x_map=None):
    """`lines`: a list of (label, color, dashed, [(x, y), ...]). `x_map` turns an x value into a
    position on the axis (for a log-scaled tail); `x_ticks` is a list of (x, label); `y_log`
    puts the y axis on a log scale (latencies that differ by orders of magnitude)."""
    w, h, left, bottom, top, right = 640, 300, 60, 40, 30, 20
    x_map = x_map or (lambda x: x)
    points = [(label, color, dashed, [(x_map(x), y) for x, y in pts if not (y_log and y <= 0)]) for label, color, dashed, pts in lines]
    xs = [x for *_, pts in points for x, _ in pts] or [0, 1]
    ys = [y for *_, pts in points for _, y in pts] or [1]
    xmin, xmax = min(xs), max(xs)
    xmax = xmax if xmax > xmin else xmin + 1
    if y_log:
        ylo = 10 ** math.floor(math.log10(min(ys)))
        yhi = 10 ** math.ceil(math.log10(max(ys)))
        yhi = yhi if yhi > ylo else ylo * 10
        fy = lambda v: h - bottom - (h - bottom - top) * (math.log10(v) - math.log10(ylo)) / (math.log10(yhi) - math.log10(ylo))  # noqa: E731
        y_ticks = [ylo * 10 ** i for i in range(round(math.log10(yhi / ylo)) + 1)]
    else:
        yhi = max(ys) * 1.15 or 1
        fy = lambda v: h - bottom - (h - bottom - top) * v / yhi  # noqa: E731
        y_ticks = [yhi * i / 4 for i in range(5)]
    fx = lambda x: left + (w - left - right) * (x - xmin) / (xmax - xmin)  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="white"/>', f'<text x="{left}" y="18" font-size="13">{title}</text>',
           f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="black"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="black"/>']
    for v in y_ticks:
        text = f"{v:g}" if y_log else f"{v:.1f}"
        out.append(f'<text x="{left - 6}" y="{fy(v) + 4:.1f}" text-anchor="end">{text}</text>')
        out.append(f'<line x1="{left}" y1="{fy(v):.1f}" x2="{w - right}" y2="{fy(v):.1f}" stroke="#ddd"/>')
    for x, label in x_ticks or [(xmin + (xmax - xmin) * i / 5, f"{xmin + (xmax - xmin) * i / 5:g}") for i in range(6)]:
        out.append(f'<text x="{fx(x_map(x)):.1f}" y="{h - bottom + 16}" text-anchor="middle">{label}</text>')
    out.append(f'<text x="{(w + left) / 2}" y="{h - 6}" text-anchor="middle">{x_label}</text>')
    out.append(f'<text x="14" y="{(h - bottom + top) / 2}" transform="rotate(-90 14 {(h - bottom + top) / 2})" text-anchor="middle">{y_label}</text>')
    for n, (label, color, dashed, pts) in enumerate(points):
        path = " ".join(f"{fx(x):.1f},{fy(y):.1f}" for x, y in pts)
        dash = ' stroke-dasharray="5,3"' if dashed else ""
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5"{dash} points="{path}"/>')
        out.append(f'<text x="{left + 8}" y="{top + 14 * (n + 1)}" fill="{color}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def percentile_axis(p):
    """Percentile → position, log-scaled towards 100 so the tail (99, 99.9) gets room."""
    return -math.log10(max(1 - p / 100, 1e-3))


PERCENTILE_TICKS = [(0, "0"), (50, "50"), (90, "90"), (99, "99"), (99.9, "99.9")]
