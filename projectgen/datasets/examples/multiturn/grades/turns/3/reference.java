public class Grades {
    public static String letter(int score) {
        if (score < 0 || score > 100) {
            throw new IllegalArgumentException("a score is between 0 and 100, got " + score);
        }
        if (score >= 90) {
            return "A";
        }
        if (score >= 80) {
            return "B";
        }
        if (score >= 70) {
            return "C";
        }
        return "F";
    }

    public static String average(int... scores) {
        if (scores.length == 0) {
            throw new IllegalArgumentException("no scores");
        }
        long total = 0;
        for (int score : scores) {
            letter(score);
            total += score;
        }
        return letter((int) Math.floor((double) total / scores.length + 0.5));
    }
}
